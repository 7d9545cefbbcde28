// The transcript as the pipeline records it (spec part 2, Transcript and Segment). Speaker names
// are not part of it: they are resolved at read time from the speaker events, so a rename never
// rewrites the transcript.

export interface Word {
  text: string
  startMs: number
  endMs: number
}

export interface TranscriptSegment {
  /** UUID; citations point at it. */
  id: string
  sequence: number
  startMs: number
  endMs: number
  /** A, B, C... as assigned by diarization; null when there is none. */
  speakerLabel: string | null
  text: string
  confidence: number | null
  locale: string | null
  words: Word[] | null
}

export interface Transcript {
  language: string | null
  languagesDetected: string[]
  durationSeconds: number | null
  /** Who made it: a published transcript, a local engine or a remote provider. */
  engine: string
  provider: string | null
  model: string | null
  segments: TranscriptSegment[]
  /**
   * Names the source itself gave its speakers (VTT voice tags, a JSON transcript's `speaker`), by
   * label. Metadata for name suggestions, not confirmed names. Absent when the source names nobody.
   */
  speakerNames?: Record<string, string>
  /**
   * How clearly each diarized speaker's voice stands apart from the others' (0 to 1), by label,
   * as the local diarizer measured it; absent when the speakers came from elsewhere.
   */
  speakerConfidence?: Record<string, number>
}

export interface SpeakerStats {
  label: string
  speechSeconds: number
  segmentCount: number
  /** The diarizer's confidence in this speaker (Transcript.speakerConfidence), when it gave one. */
  confidence?: number
}

export const fullTextOf = (segments: readonly Pick<TranscriptSegment, 'text'>[]): string =>
  segments
    .map((s) => s.text.trim())
    .filter(Boolean)
    .join(' ')

/** The label of the first line (by sequence) that has a speaker: the roster's first speaker. */
export const firstSpeakerLabel = (segments: readonly Pick<TranscriptSegment, 'sequence' | 'speakerLabel'>[]): string | null =>
  [...segments].sort((a, b) => a.sequence - b.sequence).find((s) => s.speakerLabel)?.speakerLabel ?? null

export function speakerStats(segments: readonly TranscriptSegment[], confidence?: Record<string, number>): SpeakerStats[] {
  const by = new Map<string, SpeakerStats>()
  for (const s of segments) {
    if (!s.speakerLabel) continue
    const st = by.get(s.speakerLabel) ?? { label: s.speakerLabel, speechSeconds: 0, segmentCount: 0 }
    st.speechSeconds += (s.endMs - s.startMs) / 1000
    st.segmentCount += 1
    by.set(s.speakerLabel, st)
  }
  return [...by.values()]
    .sort((a, b) => a.label.localeCompare(b.label))
    .map((s) => ({ ...s, speechSeconds: Math.round(s.speechSeconds * 1000) / 1000, ...(typeof confidence?.[s.label] === 'number' ? { confidence: confidence[s.label] } : {}) }))
}

/**
 * The stats after lines moved from one speaker to another, exact to the millisecond as
 * speakerStats gives them: a speaker left with no line drops out, a new one comes in without a
 * diarizer's confidence (a person, not the model, heard that voice).
 */
export function statsAfterMoves(stats: readonly SpeakerStats[], moves: readonly { from: string | null; to: string; startMs: number; endMs: number }[]): SpeakerStats[] {
  const by = new Map(stats.map((s) => [s.label, { ...s, speechMs: Math.round(s.speechSeconds * 1000) }]))
  for (const move of moves) {
    const ms = move.endMs - move.startMs
    const from = move.from === null ? undefined : by.get(move.from)
    if (from) {
      from.speechMs -= ms
      from.segmentCount -= 1
      if (from.segmentCount <= 0) by.delete(from.label)
    }
    const to = by.get(move.to) ?? { label: move.to, speechSeconds: 0, speechMs: 0, segmentCount: 0 }
    to.speechMs += ms
    to.segmentCount += 1
    by.set(move.to, to)
  }
  return [...by.values()]
    .sort((a, b) => a.label.localeCompare(b.label))
    .map(({ speechMs, ...s }) => ({ ...s, speechSeconds: speechMs / 1000 }))
}
