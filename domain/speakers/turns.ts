// Who speaks when: a transcript's lines as turns, each a run of consecutive lines of one speaker.
import type { TranscriptSegment } from '../notes/transcript.ts'

export interface Turn {
  label: string | null
  startMs: number
  endMs: number
  firstSegment: number
  lastSegment: number
  segmentCount: number
}

export function turnsOf(segments: readonly Pick<TranscriptSegment, 'sequence' | 'startMs' | 'endMs' | 'speakerLabel'>[]): Turn[] {
  const turns: Turn[] = []
  for (const s of [...segments].sort((a, b) => a.sequence - b.sequence)) {
    const last = turns[turns.length - 1]
    if (last && last.label === s.speakerLabel) {
      last.endMs = Math.max(last.endMs, s.endMs)
      last.lastSegment = s.sequence
      last.segmentCount++
    } else {
      turns.push({ label: s.speakerLabel, startMs: s.startMs, endMs: s.endMs, firstSegment: s.sequence, lastSegment: s.sequence, segmentCount: 1 })
    }
  }
  return turns
}
