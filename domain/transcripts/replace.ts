// Find and replace over a transcript's segment texts (the replace-in-transcript command and the
// MCP tool replace_in_transcript). Pure: it plans the change, the decider records it.
//
// Rules (README, "Transcript edits"):
// - `find` is literal text, never a pattern.
// - `caseSensitive` (default false): case-insensitive matching folds case the Unicode way
//   (`maría` finds `María`); the replacement is inserted exactly as given.
// - `wholeWord` (default true): a match must not have a letter, digit or underscore of any
//   script right before or after it, so `Ana` does not touch `Anabel`.
// - Word timings: when `find` and `replace` are both single words, every timed word that
//   matched keeps its timing with the new text; otherwise the changed segment's `words` become
//   null, since nobody knows when the new words were said.
import type { TranscriptSegment, Word } from '../notes/transcript.ts'

export interface ReplaceOptions {
  find: string
  replace: string
  caseSensitive: boolean
  wholeWord: boolean
}

export interface SegmentChange {
  sequence: number
  segmentId: string
  before: string
  after: string
  occurrences: number
  words: Word[] | null
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
const WORD_CHAR = '[\\p{L}\\p{N}\\p{M}_]'

export function replacementPattern(options: Pick<ReplaceOptions, 'find' | 'caseSensitive' | 'wholeWord'>): RegExp {
  const body = escapeRegExp(options.find)
  const source = options.wholeWord ? `(?<!${WORD_CHAR})${body}(?!${WORD_CHAR})` : body
  return new RegExp(source, `gu${options.caseSensitive ? '' : 'i'}`)
}

const isSingleWord = (s: string) => s.length > 0 && !/\s/u.test(s)

export function planReplacement(segments: readonly TranscriptSegment[], options: ReplaceOptions): SegmentChange[] {
  const pattern = replacementPattern(options)
  const perWord = isSingleWord(options.find.trim()) && (options.replace === '' ? false : isSingleWord(options.replace.trim()))
  const changes: SegmentChange[] = []
  for (const s of segments) {
    let occurrences = 0
    // A function replacement, so `$&` and friends in the user's text stay literal.
    const after = s.text.replace(pattern, () => {
      occurrences++
      return options.replace
    })
    if (occurrences === 0 || after === s.text) continue
    let words: Word[] | null = null
    if (s.words && perWord) words = s.words.map((w) => ({ ...w, text: w.text.replace(pattern, () => options.replace) }))
    changes.push({ sequence: s.sequence, segmentId: s.id, before: s.text, after, occurrences, words })
  }
  return changes
}
