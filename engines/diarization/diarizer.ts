// The local diarizer: who speaks when comes from the audio alone (the SpeakerSegmentation port:
// a trained VAD, a segmentation model for speaker changes and overlap, speaker embeddings and
// clustering), then each recognized word takes the speaker whose turn covers most of it, and a
// segment is cut where the speaker changes between two of its words.
import type { Diarization, DiarizationRequest, Diarizer, SpeakerSegmentation } from '../../ports/diarizer.ts'
import { labelSegments } from './assign.ts'

export class TurnDiarizer implements Diarizer {
  readonly model: string

  constructor(private readonly segmentation: SpeakerSegmentation) {
    this.model = segmentation.model
  }

  async diarize(req: DiarizationRequest): Promise<Diarization> {
    const segments = [...req.segments]
    if (segments.length === 0) return { segments, speakerCount: 0 }
    const found = await this.segmentation.turns({ wavPath: req.wavPath, speakers: req.speakers, ...(req.signal ? { signal: req.signal } : {}) })
    if (found.turns.length === 0) {
      // Words but no voice the models could place (a whisper, music with lyrics): one speaker said it all.
      return { segments: segments.map((s) => ({ ...s, speaker: '1' })), speakerCount: 1 }
    }
    const { segments: labelled, ids } = labelSegments(
      segments,
      found.turns.map((t) => ({ startMs: t.startMs, endMs: t.endMs, label: t.speaker })),
    )
    const confidence: Record<string, number> = {}
    for (const [label, id] of ids) {
      const c = found.confidence[label]
      if (typeof c === 'number') confidence[id] = c
    }
    return { segments: labelled, speakerCount: ids.size, confidence }
  }
}
