// Transcript exports as text (spec part 4): txt, srt, vtt, md. Pure functions of the segments with
// their speaker names already resolved, byte-exact (docs/speech.md, "Transcript exports" shows each).
//
// - The speaker shown is the name in use, else "Speaker <label>", else nothing.
// - A translation, when asked for, either replaces the text (`translation`) or follows it
//   (`both`); a segment with no translation (yet) keeps its original text alone.
// - Line breaks inside a segment's text become spaces, so one segment is one line.
// - Control and bidirectional characters are removed; vtt writes `&<>` as entities, md and srt
//   every `<` that would open a tag and every `&` that would start an entity.

export type TranslationMode = 'translation' | 'both'

export interface ExportSegment {
  sequence: number
  startMs: number
  endMs: number
  speakerLabel: string | null
  speakerName: string | null
  text: string
  translation?: string | null
}

export interface ExportInput {
  title: string
  segments: readonly ExportSegment[]
  /** Present when a translation was asked for. */
  translation?: { language: string; mode: TranslationMode } | null
}

export const TEXT_FORMATS = ['txt', 'srt', 'vtt', 'md'] as const
export type TextFormat = (typeof TEXT_FORMATS)[number]
export const TRANSCRIPT_FORMATS = ['json', ...TEXT_FORMATS] as const
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number]

export const CONTENT_TYPES: Readonly<Record<TranscriptFormat, string>> = {
  json: 'application/json',
  txt: 'text/plain',
  md: 'text/markdown',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
}

// Bidirectional controls (embeddings, overrides, isolates and the marks: U+202A-U+202E,
// U+2066-U+2069, U+200E, U+200F, U+061C) make a line display other than what it holds (a name
// that reads as someone else's, text that runs backwards), and other control characters have no
// place in a transcript: every export removes them from titles, names and text alike.
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g
const oneLine = (s: string) => s.replace(/\s*[\r\n]+\s*/g, ' ').replace(CONTROLS, '').trim()
// WebVTT requires `&`, `<` and `>` as entities. Markdown renders raw HTML, and subtitle players
// read SubRip's <i>, <b>, <font> tags: in md and srt a `<` that would open a tag (or a comment, or
// a declaration) and an `&` that would start an entity are written as entities, so a title, a
// name or a text is shown as written, never run; "3 < 5 & 5 > 3" stays as it is.
const htmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const markupEscape = (s: string) => s.replace(/&(?=#?[A-Za-z0-9]+;)/g, '&amp;').replace(/<(?=[A-Za-z/!?])/g, '&lt;')

export const speakerShown = (s: Pick<ExportSegment, 'speakerLabel' | 'speakerName'>): string | null => {
  const shown = s.speakerName ?? (s.speakerLabel ? `Speaker ${s.speakerLabel}` : null)
  return shown === null ? null : oneLine(shown)
}

/** The lines a segment shows: the text, the translation, or both (original first). */
function lines(s: ExportSegment, input: ExportInput): { main: string; under: string | null } {
  const original = oneLine(s.text)
  const translated = s.translation === undefined || s.translation === null ? null : oneLine(s.translation)
  const mode = input.translation?.mode
  if (!mode || translated === null) return { main: original, under: null }
  if (mode === 'translation') return { main: translated, under: null }
  return { main: original, under: translated }
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (VTT). */
export function clock(ms: number, separator: ',' | '.'): string {
  const t = Math.max(0, Math.round(ms))
  const h = Math.floor(t / 3_600_000)
  const m = Math.floor((t % 3_600_000) / 60_000)
  const s = Math.floor((t % 60_000) / 1000)
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(t % 1000, 3)}`
}

/** `[mm:ss]`, minutes counting on past the hour (`[75:03]`), as the answers quote the audio. */
export function stamp(ms: number): string {
  const t = Math.max(0, Math.floor(ms / 1000))
  return `[${pad(Math.floor(t / 60))}:${pad(t % 60)}]`
}

export function toTxt(input: ExportInput): string {
  const lang = input.translation?.language ?? ''
  let paired = false
  const blocks = input.segments.map((s) => {
    const who = speakerShown(s)
    const { main, under } = lines(s, input)
    const first = who ? `${who}: ${main}` : main
    if (under === null) return first
    paired = true
    return `${first}\n[${lang}] ${under}`
  })
  // With translations under the segments, a blank line keeps the pairs apart.
  return blocks.length === 0 ? '' : `${blocks.join(paired ? '\n\n' : '\n')}\n`
}

export function toSrt(input: ExportInput): string {
  return input.segments
    .map((s, i) => {
      const who = speakerShown(s)
      const { main, under } = lines(s, input)
      const text = markupEscape([who ? `${who}: ${main}` : main, ...(under === null ? [] : [under])].join('\n'))
      return `${i + 1}\n${clock(s.startMs, ',')} --> ${clock(s.endMs, ',')}\n${text}\n`
    })
    .join('\n')
}

export function toVtt(input: ExportInput): string {
  const cues = input.segments.map((s) => {
    const who = speakerShown(s)
    const { main, under } = lines(s, input)
    const voice = who ? `<v ${htmlEscape(who)}>` : ''
    const text = [`${voice}${htmlEscape(main)}`, ...(under === null ? [] : [htmlEscape(under)])].join('\n')
    return `${clock(s.startMs, '.')} --> ${clock(s.endMs, '.')}\n${text}\n`
  })
  return ['WEBVTT\n', ...cues].join('\n')
}

export function toMarkdown(input: ExportInput): string {
  const out: string[] = [`# ${markupEscape(oneLine(input.title))}`, '']
  let current: string | null | undefined
  for (const s of input.segments) {
    const who = speakerShown(s)
    // A heading each time the speaker changes.
    if (who !== current) {
      if (who) out.push(`## ${markupEscape(who)}`, '')
      current = who
    }
    const { main, under } = lines(s, input)
    out.push(`${stamp(s.startMs)} ${markupEscape(main)}`, '')
    if (under !== null) out.push(`> ${markupEscape(under)}`, '')
  }
  return `${out.join('\n').replace(/\n+$/, '')}\n`
}

export function renderText(format: TextFormat, input: ExportInput): string {
  switch (format) {
    case 'txt':
      return toTxt(input)
    case 'srt':
      return toSrt(input)
    case 'vtt':
      return toVtt(input)
    case 'md':
      return toMarkdown(input)
  }
}
