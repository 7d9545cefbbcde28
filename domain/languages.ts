// Languages, in one place: the six the language features and translations know (es, en, de, fr,
// it, pt) with their function words (to detect a text's language, drop words that carry no topic
// from search terms and key phrases, tell a name from an ordinary capitalised word), how a locale
// such as `es-ES` or `pt_BR` maps to one of them, and the codes and names speech engines answer
// with (an ISO 639-1 code, or, from OpenAI's verbose_json and whisper.cpp, an English name).
import { tokenize } from './search/tokens.ts'

export const TRANSLATION_LANGUAGES = ['es', 'en', 'de', 'fr', 'it', 'pt'] as const
export type TranslationLanguage = (typeof TRANSLATION_LANGUAGES)[number]

/** The six under the name the language features use. */
export const LANGS = TRANSLATION_LANGUAGES
export type Lang = TranslationLanguage

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

const words = (s: string) => new Set(tokenize(s))

/** Function words per language, accent-folded and lower-case like `tokenize` returns them. */
export const STOPWORDS: Readonly<Record<Lang, ReadonlySet<string>>> = {
  en: words(`a about above after again against all also am an and any are aren as at be because been before being below between both but by
    can could couldn did didn do does doesn doing don down during each either else even ever every few for from further get gets got had has
    have having he her here hers herself him himself his how however i if in into is isn it its itself just let lets ll me might more most
    much must my myself no nor not now of off on once only or other our ours ourselves out over own re same shall she should so some such
    than that the their theirs them themselves then there these they this those through to too under until up upon us ve very was wasn we
    were weren what when where whether which while who whom whose why will with won would yes yet you your yours yourself yourselves
    okay ok yeah oh uh um hmm well right like really maybe gonna wanna kind sort thing things something anything everything lot lots going
    go goes say says said think thought know want need one two also still already today tomorrow now here there s t d m
    nobody anybody somebody everybody everyone someone anyone anymore else got getting make makes made instead
    along across around behind beyond within without via per among toward towards onto`),
  es: words(`a al algo algun alguna algunas alguno algunos ante antes aquel aquella aquellas aquellos aqui asi aun aunque bajo bien cada casi
    como con contra cual cuales cuando cuanto de del desde donde dos el ella ellas ello ellos en entre era eran eres es esa esas ese eso esos
    esta estaba estaban estamos estan estar estas este esto estos estoy fue fueron fui ha habia han has hasta hay he la las le les lo los mas
    me mi mis mucho muchos muy nada ni no nos nosotros nuestra nuestras nuestro nuestros o os otra otras otro otros para pero poco por porque
    pues que quien quienes se sea ser si sido siempre sin sobre somos son soy su sus tambien tanto te tenemos tener tengo ti tiene tienen
    todo todos tu tus un una unas uno unos usted ustedes va vamos van vez y ya yo vale bueno pues claro entonces osea eh este digamos cosa
    cosas creo hacer hace hecho ver vale dice dijo decir mismo misma hoy ahora aqui alli tan tal hemos habeis habia durante solo sale`),
  de: words(`aber alle allem allen aller alles als also am an ander andere anderen auch auf aus bei bin bis bist da damit dann das dass dein
    deine dem den denn der des dich die dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines er es
    etwas euch euer eure fur gegen gewesen hab habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre im in indem ins ist ja
    jede jedem jeden jeder jedes jetzt kann kein keine konnen man manche mein meine mich mir mit muss mussen nach nicht nichts noch nun nur
    ob oder ohne sehr sein seine sich sie sind so solche soll sollen sollte sondern uber um und uns unser unsere unter viel vom von vor war
    waren warst was weg weil weiter welche wenn wer werde werden wie wieder will wir wird wirst wo wollen wurde wurden zu zum zur zwar
    zwischen also gut okay genau halt mal eben schon heute morgen`),
  fr: words(`a ai aie aient aies ait alors as au aucun aussi autre aux avaient avais avait avec avez aviez avions avoir avons c ca ce ceci
    cela celle celles celui ces cet cette chaque ci comme comment d dans de des deux devrait doit donc dont du elle elles en encore es est et
    etaient etais etait etant ete etre eu eux fait faire fais il ils j je l la le les leur leurs lui m ma mais me meme mes moi mon n ne ni nos
    notre nous on ont ou par parce pas peu peut plus pour pourquoi qu quand que quel quelle quelles quels qui s sa sans se sera ses si son
    sont sur t ta te tes toi ton tous tout toute toutes tres tu un une vos votre vous y voila bon bien alors euh oui non donc ben aujourd hui
    chose choses faut va vais vont`),
  it: words(`a ad agli ai al alla alle allo anche avere aveva avevano c che chi ci coi col come con contro cui da dal dalla dalle dagli dei del
    della delle dello di dove e ed era erano essere gli ha hai hanno ho i il in io la le lei li lo loro lui ma mi mia mie miei mio ne negli nei
    nel nella nelle no noi non nostra nostre nostri nostro o per perche piu poco qua quale quali quando quanto quella quelle quelli quello
    questa queste questi questo qui se sei si sia siamo siete sono sta stata stato su sua sue sui sul sulla suo suoi ti tra tu tua tue tuo
    tuoi tutti tutto un una uno vi voi allora bene cosa cose va fatto fare molto oggi ecco quindi cioe`),
  pt: words(`a ao aos aquela aquelas aquele aqueles aquilo as ate com como da das de dela delas dele deles depois do dos e ela elas ele eles
    em entre era eram essa essas esse esses esta estamos estao estar estas este estes eu foi foram ha isso isto ja la lhe lhes mais mas me
    mesmo meu meus minha minhas muito na nao nas nem no nos nossa nossas nosso nossos num numa o os ou para pela pelas pelo pelos por porque
    qual quando que quem se sem ser seu seus so sua suas tambem te tem temos tenho ter teu tua um uma umas uns voce voces vai vamos vou
    entao bom bem coisa coisas fazer feito hoje agora aqui`),
}

/** Every language's function words together (search terms and names do not know the language). */
export const ALL_STOPWORDS: ReadonlySet<string> = new Set(LANGS.flatMap((l) => [...STOPWORDS[l]]))

/** Words short and common in several languages, which say nothing about which one a text is in. */
const AMBIGUOUS = words('a e o de la le en es un in no se si die ha era me te y i a')

/**
 * The language of a text by counting function words of each language (accent-folded tokens).
 * `fallback` (e.g. the transcript's declared language) wins when the text is too short to tell.
 */
export function detectLanguage(text: string, fallback?: string | null): Lang {
  const declared = normalizeLang(fallback)
  const tokens = tokenize(text).slice(0, 4000)
  const score: Record<Lang, number> = { es: 0, en: 0, de: 0, fr: 0, it: 0, pt: 0 }
  for (const t of tokens) {
    if (AMBIGUOUS.has(t)) continue
    for (const l of LANGS) if (STOPWORDS[l].has(t)) score[l]++
  }
  const ranked = LANGS.slice().sort((a, b) => score[b] - score[a])
  const best = ranked[0]!
  if (score[best] < 3) return declared ?? best
  // A declared language close to the best guess stays: short texts mix function words.
  if (declared && score[declared] >= score[best] * 0.8) return declared
  return best
}

/**
 * The language of a text when the text says so clearly, else null (a text in none of the six, or
 * too short to tell): at least 5 function words of the winner, and at least 1.5 times the
 * runner-up's count. For a transcript published without a language (a feed with no `language`).
 */
export function detectTextLanguage(text: string): Lang | null {
  const tokens = tokenize(text).slice(0, 4000)
  const score: Record<Lang, number> = { es: 0, en: 0, de: 0, fr: 0, it: 0, pt: 0 }
  for (const t of tokens) {
    if (AMBIGUOUS.has(t)) continue
    for (const l of LANGS) if (STOPWORDS[l].has(t)) score[l]++
  }
  const [best, second] = LANGS.slice().sort((a, b) => score[b] - score[a])
  if (score[best!] < 5 || score[best!] < score[second!] * 1.5) return null
  // Function words must be a real share of the words: a text in another language shares a few.
  if (score[best!] < tokens.length * 0.15) return null
  return best!
}

/** `es-ES`, `ES`, `spa`... to one of the six, or null. */
export function normalizeLang(code: string | null | undefined): Lang | null {
  if (!code) return null
  const c = code.toLowerCase().slice(0, 2)
  return (LANGS as readonly string[]).includes(c) ? (c as Lang) : null
}

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

/** The language part of a locale (`es-ES` -> `es`, `English` -> `en`): what engines take as a hint. */
export const languageHint = (locale: string | null): string | null => (locale ? (normalizeLanguage(locale)?.split('-')[0] ?? null) : null)
