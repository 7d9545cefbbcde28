// Builds the transcript the note keeps (spec part 2) from what a source or an engine produced:
// ordered segments with stable ids, speaker labels A, B, C..., locale, full text and languages.
import { uuidFromName } from '../ids.ts'
import { assignSpeakerLabels } from './captions.ts'
import type { Transcript, TranscriptSegment, Word } from './transcript.ts'

export interface RawSegment {
  startMs: number
  endMs: number
  text: string
  /** The source's speaker id or name; null when the source did not diarize. */
  speaker: string | null
  confidence: number | null
  words: Word[] | null
  /** The language of this segment when the engine told it per segment; absent or null: the transcript's. */
  language?: string | null
}

/** The raw segments, and the transcript's own fields (who made it, language, duration) as they are. */
export interface AssembleInput extends Pick<Transcript, 'language' | 'languagesDetected' | 'durationSeconds' | 'engine' | 'provider' | 'model'> {
  noteId: string
  jobId: string
  segments: readonly RawSegment[]
  /** True when `speaker` values are people's names (voice tags), kept as `speakerNames`. */
  speakersAreNames: boolean
  /** The diarizer's confidence per speaker id (0 to 1), kept as `speakerConfidence` by label. */
  speakerConfidence?: Record<string, number>
}

const ms = (n: number) => Math.max(0, Math.round(n))

/** Every locale the segments carry, the most speech first. */
function segmentLanguages(segments: readonly TranscriptSegment[]): string[] {
  const speech = new Map<string, number>()
  for (const s of segments) if (s.locale) speech.set(s.locale, (speech.get(s.locale) ?? 0) + Math.max(1, s.endMs - s.startMs))
  return [...speech].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([l]) => l)
}

export function assembleTranscript(input: AssembleInput): Transcript {
  const ordered = input.segments
    .map((s) => ({ ...s, text: s.text.replace(/\s+/g, ' ').trim() }))
    .filter((s) => s.text !== '')
    .sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs)
  const { labels, names } = assignSpeakerLabels(ordered.map((s) => s.speaker))
  const segments: TranscriptSegment[] = ordered.map((s, i) => ({
    // The same job writes the same ids on every retry; citations point at them.
    id: uuidFromName(`transcript:${input.noteId}:${input.jobId}`, String(i)),
    sequence: i,
    startMs: ms(s.startMs),
    endMs: Math.max(ms(s.startMs), ms(s.endMs)),
    speakerLabel: labels[i] ?? null,
    text: s.text,
    confidence: s.confidence === null || !Number.isFinite(s.confidence) ? null : Math.min(1, Math.max(0, s.confidence)),
    locale: s.language ?? input.language,
    words: s.words ? s.words.map((w) => ({ text: w.text.trim(), startMs: ms(w.startMs), endMs: Math.max(ms(w.startMs), ms(w.endMs)) })).filter((w) => w.text !== '') : null,
  }))
  const transcript: Transcript = {
    language: input.language,
    // When the engine labelled segments one by one, the languages follow from them: a client never
    // sees a segment in a language the transcript does not list. Otherwise the engine's list.
    languagesDetected: ordered.some((s) => s.language) ? segmentLanguages(segments) : [...new Set(input.languagesDetected.filter(Boolean))],
    durationSeconds: input.durationSeconds,
    engine: input.engine,
    provider: input.provider,
    model: input.model,
    segments,
  }
  if (input.speakersAreNames && names.size > 0) transcript.speakerNames = Object.fromEntries(names)
  const confidence = [...names].filter(([, id]) => typeof input.speakerConfidence?.[id] === 'number').map(([label, id]) => [label, input.speakerConfidence![id]!] as const)
  if (confidence.length > 0) transcript.speakerConfidence = Object.fromEntries(confidence)
  return transcript
}
