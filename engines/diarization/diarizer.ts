// The local diarizer: who speaks when comes from the audio alone (the SpeakerSegmentation port:
// a trained VAD, a segmentation model for speaker changes and overlap, speaker embeddings and
// clustering), then each recognized word takes the speaker whose turn covers most of it, a
// segment is cut where the speaker changes between two of its words, and its ends are moved out
// to where its speaker's turn begins and ends (recognition's word times fall short of the voice).
import type { Diarization, DiarizationRequest, Diarizer, SpeakerSegmentation, SpeakerTurn, SpeakerTurns } from '../../ports/diarizer.ts'
import type { RecognizedSegment } from '../../ports/speechEngine.ts'
import { labelSegments } from './assign.ts'

/** How far a segment's ends may move out to its turn's (ms). */
const REACH_MS = 1000

/**
 * Segments widened to the turn of their speaker that holds each end, never past a neighbouring
 * segment nor by more than REACH_MS.
 */
export function fitToTurns(segments: readonly RecognizedSegment[], turns: readonly SpeakerTurn[], labelOf: ReadonlyMap<string, number>): RecognizedSegment[] {
  const out: RecognizedSegment[] = []
  segments.forEach((s, i) => {
    const label = s.speaker === null ? undefined : labelOf.get(s.speaker)
    const holding = (ms: number) => turns.find((t) => t.speaker === label && t.startMs <= ms && ms <= t.endMs)
    const first = label === undefined ? undefined : holding(s.startMs)
    const last = label === undefined ? undefined : holding(s.endMs)
    // In order, so a gap between two segments goes to the first that reaches into it.
    const prevEnd = out.length > 0 ? out[out.length - 1]!.endMs : 0
    const nextStart = i + 1 < segments.length ? segments[i + 1]!.startMs : Infinity
    const startMs = first ? Math.min(s.startMs, Math.max(first.startMs, prevEnd, s.startMs - REACH_MS)) : s.startMs
    const endMs = last ? Math.max(s.endMs, Math.min(last.endMs, nextStart, s.endMs + REACH_MS)) : s.endMs
    out.push(startMs < s.startMs || endMs > s.endMs ? { ...s, startMs, endMs } : s)
  })
  return out
}

export class TurnDiarizer implements Diarizer {
  readonly model: string

  /** Turns found before recognition, by audio, until the diarize() that follows takes them. */
  private readonly found = new Map<string, { speakers: number | null; turns: Promise<SpeakerTurns> }>()

  constructor(private readonly segmentation: SpeakerSegmentation) {
    this.model = segmentation.model
  }

  turns(req: { wavPath: string; speakers: number | null; signal?: AbortSignal }): Promise<SpeakerTurns> {
    const turns = this.segmentation.turns(req)
    turns.catch(() => this.found.delete(req.wavPath))
    this.found.set(req.wavPath, { speakers: req.speakers, turns })
    // A job that failed between the two calls leaves its entry: only the last few are kept.
    for (const key of [...this.found.keys()].slice(0, Math.max(0, this.found.size - 8))) this.found.delete(key)
    return turns
  }

  async diarize(req: DiarizationRequest): Promise<Diarization> {
    const segments = [...req.segments]
    if (segments.length === 0) return { segments, speakerCount: 0 }
    const earlier = this.found.get(req.wavPath)
    this.found.delete(req.wavPath)
    const found = earlier && earlier.speakers === req.speakers ? await earlier.turns : await this.segmentation.turns({ wavPath: req.wavPath, speakers: req.speakers, ...(req.signal ? { signal: req.signal } : {}) })
    if (found.turns.length === 0) {
      // Words but no voice the models could place (a whisper, music with lyrics): one speaker said it all.
      return { segments: segments.map((s) => ({ ...s, speaker: '1' })), speakerCount: 1 }
    }
    const { segments: split, ids } = labelSegments(
      segments,
      found.turns.map((t) => ({ startMs: t.startMs, endMs: t.endMs, label: t.speaker })),
    )
    const labelled = fitToTurns(split, found.turns, new Map([...ids].map(([label, id]) => [id, label])))
    const confidence: Record<string, number> = {}
    for (const [label, id] of ids) {
      const c = found.confidence[label]
      if (typeof c === 'number') confidence[id] = c
    }
    return { segments: labelled, speakerCount: ids.size, confidence }
  }
}
