// Rule-based machine translation (Apertium) leaves marks of its chunking in the text: doubled
// spaces, a space before punctuation ("Hola Todo el mundo,  soy Alice Johnson ."), and a capital
// on the word after a sentence's first chunk ("Hello To all", "Thank you For inviting me").
// This puts them right without touching what the engine meant: only spacing around punctuation,
// and only capitals on function words in mid-sentence that the source did not capitalise.
import { STOPWORDS, type TranslationLanguage } from '../languages.ts'
import { tokenize } from '../search/tokens.ts'

const WORD = /\p{L}[\p{L}'’-]*/gu
const OPENERS = /[\s¿¡«"“‘'([]+$/u
const SENTENCE_END = /[.!?…:;]$/u

/** French sets a space before these (and inside guillemets): kept when the engine wrote one. */
const FRENCH_SPACED = ';:!?»'

function tidySpacing(text: string, to: TranslationLanguage): string {
  const keepBefore = to === 'fr' ? FRENCH_SPACED : ''
  return text
    .replace(/\s+/g, ' ')
    .replace(/ ([,.;:!?…)\]»])/g, (m, p: string) => (keepBefore.includes(p) ? m : p))
    .replace(/([(¿¡[«]) /g, (m, p: string) => (to === 'fr' && p === '«' ? m : p))
    .trim()
}

function isSentenceStart(before: string): boolean {
  const rest = before.replace(OPENERS, '')
  return rest.length === 0 || SENTENCE_END.test(rest)
}

/**
 * Lower-cases a capitalised function word in mid-sentence ("Hola Todo el mundo" → "Hola todo el
 * mundo") unless the source has the same word capitalised (a name such as "Will"). Names are not
 * function words, so they keep their capital; German is left alone (its nouns are capitalised,
 * and its formal "Sie" is a function word), and so is the English "I".
 */
function tidyCapitals(source: string, text: string, to: TranslationLanguage): string {
  if (to === 'de') return text
  const sourceWords = new Set(source.match(WORD) ?? [])
  return text.replace(WORD, (word, offset: number) => {
    const first = word[0]!
    if (first === first.toLowerCase() || word.slice(1) !== word.slice(1).toLowerCase()) return word
    if (to === 'en' && /^I(?:['’]|$)/.test(word)) return word
    if (sourceWords.has(word) || isSentenceStart(text.slice(0, offset))) return word
    const folded = tokenize(word)
    if (folded.length !== 1 || !STOPWORDS[to].has(folded[0]!)) return word
    return first.toLowerCase() + word.slice(1)
  })
}

export function tidyMachineTranslation(source: string, translated: string, to: TranslationLanguage): string {
  return tidyCapitals(source, tidySpacing(translated, to), to)
}
