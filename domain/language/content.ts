// What the language features read and produce: plain data, shared by the domain (events carry
// it), the language-engine port and its adapters. The zod schemas in contract/ describe the same
// shapes for the API and validate what a remote model returns.
import { createHash } from 'node:crypto'

/**
 * Who says a segment, as the engines see it: `speaker` is the name in use when there is one, else
 * the diarization letter (what a debate section's `speaker` holds, spec part 2); `speakerLabel` is
 * the letter. Both are null when nobody diarized the segment.
 */
export interface SpokenBy {
  speaker: string | null
  speakerLabel: string | null
}

/** Whether `speaker` is a name rather than the bare letter (a name that equals its own letter reads as the letter). */
export const isNamed = (x: SpokenBy): boolean => x.speaker !== null && x.speaker !== x.speakerLabel

/** A transcript segment as the engines see it. */
export interface SourceSegment extends SpokenBy {
  /** Segment uuid: citations and anchors point at it. */
  id: string
  sequence: number
  startMs: number
  endMs: number
  text: string
}

export interface SourceTranscript {
  noteId: string
  title: string
  /** Declared or detected language of the audio (any tag; the engines use its first two letters). */
  language: string | null
  durationMs: number | null
  segments: SourceSegment[]
}

/** Which engine made something: recorded with every generation. */
export interface EngineInfo {
  engine: string
  model: string
  version: string
}

export interface ActionItemDraft {
  text: string
  assignee: string
  deadline: string
}

export interface SectionItemDraft {
  text: string
  speaker: string | null
  t: number | null
}

export interface AnalysisDraft {
  summary: string
  keyPoints: string[]
  actionItems: ActionItemDraft[]
  decisions: string[]
  questions: string[]
  topics: string[]
  anchors: { keyPoints: (number | null)[]; actionItems: (number | null)[]; decisions: (number | null)[]; questions: (number | null)[] } | null
  sections: Record<'positions' | 'arguments' | 'quotes' | 'agreements' | 'disagreements', SectionItemDraft[]> | null
  mindmap: string | null
}

export interface ChapterDraft {
  startMs: number
  endMs: number
  headline: string
}

/** A retrieved passage the answer may cite. `label` is how the answer must quote it: `[mm:ss]` or `[Note title | mm:ss]`. */
export interface Passage extends SpokenBy {
  segmentId: string
  noteId: string
  noteTitle: string
  startMs: number
  endMs: number
  text: string
  label: string
  score: number
}

export interface AnswerRequest {
  question: string
  scope: 'note' | 'library'
  passages: Passage[]
  /** Earlier turns of the conversation, oldest first. */
  history: { question: string; answer: string }[]
}

export interface AnswerDraft {
  answer: string
  /** Segment ids the answer quotes, in order of first quotation. */
  citedSegments: string[]
}

export type DeliverableKindName = 'email' | 'document' | 'slides'

export interface DeliverableRequest {
  kind: DeliverableKindName
  template: string
  locale: 'es' | 'en'
  transcript: SourceTranscript
  /** The analysis the deliverable is built on (persisted, or made for it). */
  analysis: AnalysisDraft
  /** When the note was recorded or created, for headers. */
  date: string
}

export interface DeliverableSection {
  heading: string
  paragraphs: string[]
  bullets: string[]
}

/** One shape for the three kinds: an email's sections are its body, a deck's sections are its slides. */
export interface DeliverableDraft {
  title: string
  /** Email subject line; null for documents and slides. */
  subject: string | null
  sections: DeliverableSection[]
}

/**
 * The names a transcript was read with, by label (labels without a name left out): recorded with
 * an analysis, so a deliverable can tell whether that analysis still names speakers as they are.
 */
export function speakerNamesIn(t: Pick<SourceTranscript, 'segments'>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const s of t.segments) if (s.speakerLabel && isNamed(s)) out[s.speakerLabel] = s.speaker!
  return out
}

/**
 * Which speaker has which line, as a short digest: two transcripts with the same digest give every
 * line to the same speaker (a line moved to another speaker changes it; a rename does not).
 */
export function attributionOf(t: Pick<SourceTranscript, 'segments'>): string {
  const lines = [...t.segments].sort((a, b) => a.sequence - b.sequence).map((s) => `${s.sequence}:${s.speakerLabel ?? ''}`)
  return createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16)
}

export function sameSpeakerNames(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k])
}

/** How long the audio is: the declared duration, or the end of the last segment when that is later. */
export const audioDurationMs = (t: Pick<SourceTranscript, 'durationMs' | 'segments'>): number =>
  t.segments.reduce((m, s) => Math.max(m, s.endMs), Math.max(0, t.durationMs ?? 0))
