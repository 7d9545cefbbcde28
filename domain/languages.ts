// The languages transcripts can be translated into (spec part 4), and how a locale such as
// `es-ES` or `pt_BR` maps to one of them.

export const TRANSLATION_LANGUAGES = ['es', 'en', 'de', 'fr', 'it', 'pt'] as const
export type TranslationLanguage = (typeof TRANSLATION_LANGUAGES)[number]

export const isTranslationLanguage = (s: string): s is TranslationLanguage => (TRANSLATION_LANGUAGES as readonly string[]).includes(s)

/** The bare language of a locale (`es-ES` → `es`), lower case; null when there is none. */
export function baseLanguage(locale: string | null | undefined): string | null {
  if (!locale) return null
  const m = /^([a-zA-Z]{2,3})(?:[-_].*)?$/.exec(locale.trim())
  return m ? m[1]!.toLowerCase() : null
}

export const LANGUAGE_NAMES: Readonly<Record<TranslationLanguage, string>> = {
  es: 'Spanish',
  en: 'English',
  de: 'German',
  fr: 'French',
  it: 'Italian',
  pt: 'Portuguese',
}

/**
 * The default target when a request names none. There is no per-user language setting yet, so
 * "the user's language" is what the client declares: the first of the six in `Accept-Language`
 * (in the header's order of preference), else English.
 */
export function preferredLanguage(acceptLanguage: string | null | undefined): TranslationLanguage {
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';')
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean)
      return { lang: baseLanguage(tag), q: q === undefined ? 1 : Number(q), i }
    })
    .filter((x) => x.lang && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
  for (const r of ranked) if (isTranslationLanguage(r.lang!)) return r.lang
  return 'en'
}
