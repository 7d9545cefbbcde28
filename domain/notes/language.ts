// Language names and codes: engines answer with an ISO 639-1 code or (OpenAI's verbose_json,
// whisper.cpp) an English language name; notes carry a code or the forced locale.

// Whisper's language table (name -> ISO 639-1), the names OpenAI-compatible endpoints return.
const WHISPER_LANGUAGES: Record<string, string> = {
  english: 'en', chinese: 'zh', german: 'de', spanish: 'es', russian: 'ru', korean: 'ko', french: 'fr', japanese: 'ja', portuguese: 'pt', turkish: 'tr',
  polish: 'pl', catalan: 'ca', dutch: 'nl', arabic: 'ar', swedish: 'sv', italian: 'it', indonesian: 'id', hindi: 'hi', finnish: 'fi', vietnamese: 'vi',
  hebrew: 'he', ukrainian: 'uk', greek: 'el', malay: 'ms', czech: 'cs', romanian: 'ro', danish: 'da', hungarian: 'hu', tamil: 'ta', norwegian: 'no',
  thai: 'th', urdu: 'ur', croatian: 'hr', bulgarian: 'bg', lithuanian: 'lt', latin: 'la', maori: 'mi', malayalam: 'ml', welsh: 'cy', slovak: 'sk',
  telugu: 'te', persian: 'fa', latvian: 'lv', bengali: 'bn', serbian: 'sr', azerbaijani: 'az', slovenian: 'sl', kannada: 'kn', estonian: 'et', macedonian: 'mk',
  breton: 'br', basque: 'eu', icelandic: 'is', armenian: 'hy', nepali: 'ne', mongolian: 'mn', bosnian: 'bs', kazakh: 'kk', albanian: 'sq', swahili: 'sw',
  galician: 'gl', marathi: 'mr', punjabi: 'pa', sinhala: 'si', khmer: 'km', shona: 'sn', yoruba: 'yo', somali: 'so', afrikaans: 'af', occitan: 'oc',
  georgian: 'ka', belarusian: 'be', tajik: 'tg', sindhi: 'sd', gujarati: 'gu', amharic: 'am', yiddish: 'yi', lao: 'lo', uzbek: 'uz', faroese: 'fo',
  'haitian creole': 'ht', pashto: 'ps', turkmen: 'tk', nynorsk: 'nn', maltese: 'mt', sanskrit: 'sa', luxembourgish: 'lb', myanmar: 'my', tibetan: 'bo', tagalog: 'tl',
  malagasy: 'mg', assamese: 'as', tatar: 'tt', hawaiian: 'haw', lingala: 'ln', hausa: 'ha', bashkir: 'ba', javanese: 'jw', sundanese: 'su', cantonese: 'yue',
}

/** `en`, `en-US`, `English` -> a lower-case language code with an upper-case region (`en`, `en-US`); null when unknown. */
export function normalizeLanguage(raw: string | null | undefined): string | null {
  if (!raw) return null
  const s = raw.trim()
  if (!s) return null
  const named = WHISPER_LANGUAGES[s.toLowerCase()]
  if (named) return named
  const m = /^([a-zA-Z]{2,3})(?:[-_]([a-zA-Z0-9]{2,8}))?$/.exec(s)
  if (!m) return null
  return m[2] ? `${m[1]!.toLowerCase()}-${m[2].length === 2 ? m[2].toUpperCase() : m[2]}` : m[1]!.toLowerCase()
}

/** The language part of a locale (`es-ES` -> `es`): what engines take as a hint. */
export const baseLanguage = (locale: string | null): string | null => (locale ? (normalizeLanguage(locale)?.split('-')[0] ?? null) : null)
