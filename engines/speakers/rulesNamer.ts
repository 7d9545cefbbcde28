// The local speaker namer: the deterministic rules of domain/speakers/inference.ts.
import { inferSpeakerNames } from '../../domain/speakers/inference.ts'
import type { SpeakerNamer } from '../../ports/speakerNamer.ts'

export const rulesSpeakerNamer: SpeakerNamer = {
  engine: 'rules',
  model: null,
  async suggest(input) {
    return inferSpeakerNames(input)
  },
}
