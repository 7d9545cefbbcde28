// The port that infers speaker names from a transcript and its source (no voice analysis):
// a deterministic rules engine locally, or a chat model when one is configured.
import type { InferenceInput } from '../domain/speakers/inference.ts'
import type { NameSuggestion } from '../domain/speakers/speakers.ts'

export interface SpeakerNamer {
  readonly engine: string
  readonly model: string | null
  /** One suggestion per label of the transcript; throws when the inference itself failed. */
  suggest(input: InferenceInput, signal?: AbortSignal): Promise<NameSuggestion[]>
}
