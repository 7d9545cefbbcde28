// What the installed translation engine can translate, as data: a request for a pair it cannot
// do is refused when it is made (409 translation_pair_unsupported, with the pairs it can do),
// instead of being queued to fail; clients read the same list at GET /v1/translation/pairs.
import type { TranslationLanguage } from '../languages.ts'

/** `from` of a pair the engine translates from any audio language, including an unknown one. */
export const ANY_SOURCE = '*'

export interface TranslationPair {
  /** The audio's language (a bare code such as `es`), or `*`: any. */
  from: string
  to: TranslationLanguage
}

export interface TranslationCapability {
  /** The engine translations are made with (`openai-compatible`, `apertium`, `none`). */
  engine: string
  model: string | null
  pairs: TranslationPair[]
  /** What to configure for the pairs that are missing; null when every pair can be done. */
  missingPairsHint: string | null
}

export function canTranslate(capability: TranslationCapability, from: string | null, to: TranslationLanguage): boolean {
  return capability.pairs.some((p) => p.to === to && (p.from === ANY_SOURCE || (from !== null && p.from === from)))
}

/** Why `from` → `to` cannot be translated here, in words that say what would fix it; null when it can. */
export function unsupportedPair(capability: TranslationCapability, from: string | null, to: TranslationLanguage): string | null {
  if (canTranslate(capability, from, to)) return null
  if (capability.pairs.length === 0) return capability.missingPairsHint ?? `The translation engine here (${capability.engine}) translates nothing.`
  const what = from === null ? `a transcript whose language is unknown into ${to}` : `${from}→${to}`
  const can = capability.pairs.map((p) => `${p.from}→${p.to}`).join(', ')
  return `The translation engine here (${capability.engine}) cannot translate ${what}; it can do ${can}.${capability.missingPairsHint ? ` ${capability.missingPairsHint}` : ''}`
}
