// Text handling shared by the local language engine: sentences that remember the segment they
// come from (so every extracted item can be anchored at the segment's exact start), folding
// that keeps character positions, and time labels.
import type { SourceSegment, SpokenBy } from '../../ports/languageEngine.ts'
import { isNamed } from '../../domain/language/content.ts'
import { indexTerms } from '../../domain/search/terms.ts'

export interface Sentence {
  /** Position among all sentences. */
  index: number
  /** As said (trimmed, NFC). */
  text: string
  /** Accent-folded, same length and positions as `text` (case kept). */
  folded: string
  /** `folded` in lower case. */
  low: string
  segment: SourceSegment
  segmentIndex: number
  /** Start of the source segment: anchors point here. */
  startMs: number
  speaker: string | null
  /** Search terms (function words dropped, stemmed). */
  terms: string[]
  wordCount: number
}

/**
 * Folds accents without moving characters: each precomposed letter becomes its base letter, so
 * a match found in the folded text sits at the same offsets in the original.
 */
export function fold(text: string): string {
  let out = ''
  for (const ch of text) {
    const base = ch.normalize('NFD').replace(/\p{M}+/gu, '')
    out += base.length === ch.length ? base : ch
  }
  return out
}

const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'sr', 'sra', 'srta', 'dra', 'prof', 'etc', 'ej', 'vs', 'st', 'no', 'nr', 'pag', 'p', 'approx', 'aprox', 'inc', 'ltd', 'z', 'b', 'bzw', 'ca', 'mme', 'mlle', 'sig', 'dott', 'ing'])

/** Splits one segment's text into sentences at . ! ? … followed by a space, not after an abbreviation. */
export function splitText(text: string): string[] {
  const s = text.normalize('NFC').replace(/[\u2018\u2019]/g, "'").replace(/\s+/g, ' ').trim()
  if (!s) return []
  const out: string[] = []
  let start = 0
  const re = /[.!?…]+["'»)]*\s+/g
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const end = m.index + m[0].length
    const before = s.slice(start, m.index)
    const lastWord = /([\p{L}]+)$/u.exec(before)?.[1]?.toLowerCase()
    if (m[0].startsWith('.') && lastWord && (ABBREVIATIONS.has(lastWord) || lastWord.length === 1)) continue
    const next = s[end]
    // A lower-case continuation ("e.g. this") is not a new sentence.
    if (next && /\p{Ll}/u.test(next)) continue
    out.push(s.slice(start, end).trim())
    start = end
  }
  if (start < s.length) out.push(s.slice(start).trim())
  return out.filter(Boolean)
}

export function sentencesOf(segments: readonly SourceSegment[]): Sentence[] {
  const out: Sentence[] = []
  segments.forEach((segment, segmentIndex) => {
    for (const text of splitText(segment.text)) {
      const folded = fold(text)
      out.push({
        index: out.length,
        text,
        folded,
        low: folded.toLowerCase(),
        segment,
        segmentIndex,
        startMs: segment.startMs,
        speaker: segment.speaker,
        terms: indexTerms(text),
        wordCount: text.split(/\s+/).filter(Boolean).length,
      })
    }
  })
  return out
}

export { mmss } from '../../domain/language/time.ts'

/** Capitalises the first letter and drops trailing connective punctuation. */
export function tidy(text: string): string {
  const t = text
    .trim()
    .replace(/^[,;:\-–—\s]+/, '')
    .replace(/[,;:\-–—\s]+$/, '')
    .trim()
  if (!t) return t
  return t[0]!.toUpperCase() + t.slice(1)
}

/** Cuts a text to at most `max` characters at a word boundary. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text
  const cut = text.slice(0, max - 1)
  const space = cut.lastIndexOf(' ')
  return `${(space > max * 0.5 ? cut.slice(0, space) : cut).replace(/[,;:.\s]+$/, '')}…`
}

/** How a speaker reads in the engine's text: the name in use, else the letter as "Speaker A" in the language; '' for nobody. */
export function speakerDisplay(x: SpokenBy | null, lang: string): string {
  if (!x?.speaker) return ''
  return isNamed(x) ? x.speaker : `${SPEAKER_WORD[lang] ?? 'Speaker'} ${x.speaker}`
}

const SPEAKER_WORD: Record<string, string> = { en: 'Speaker', es: 'Hablante', de: 'Sprecher', fr: 'Intervenant', it: 'Relatore', pt: 'Orador' }
