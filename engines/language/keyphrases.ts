// Key phrases: runs of content words between function words and punctuation (as RAKE finds
// candidates), scored by how often they recur, how rare their words are across the text, and how
// long they are. Used for topics, chapter headlines and mind-map branches.
import { ALL_STOPWORDS } from '../../domain/languages.ts'
import { stem } from '../../domain/search/terms.ts'
import type { Sentence } from './text.ts'
import { fold } from './text.ts'

export interface Phrase {
  /** As said most often (first letter as said, unless it only opened sentences). */
  text: string
  /** Stems joined by spaces: what makes two mentions the same phrase. */
  key: string
  stems: string[]
  count: number
  score: number
  /** Sentence where it is first said. */
  first: number
}

/** Spoken fillers and words too general to name a topic, in the six languages. */
const WEAK = new Set(
  `yeah yes okay ok really actually basically literally mean means know guess sure thanks thank please sorry good great nice fine
   people person time times way ways day days week weeks part parts point points question questions idea ideas today tomorrow
   everyone everybody someone something nothing anything little bit lot number case example
   gracias bueno vale claro verdad gente persona personas vez veces forma manera dia dias semana semanas parte partes punto puntos
   pregunta preguntas idea ideas momento tipo cosa cosas ejemplo caso alguien nadie todo todos poco mucho
   danke bitte genau leute mal zeit tag tage woche wochen teil punkt frage fragen idee beispiel fall
   merci oui non gens personne fois jour jours semaine semaines partie point question questions idee exemple cas
   grazie si gente persona volta volte giorno giorni settimana parte punto domanda domande idea esempio caso
   obrigado obrigada sim gente pessoa pessoas vez vezes dia dias semana parte ponto pergunta perguntas ideia exemplo caso
   manana ayer semana lunes martes miercoles jueves viernes sabado domingo queda quedan tiene tienen
   yesterday monday tuesday wednesday thursday friday saturday sunday morgen gestern montag dienstag mittwoch donnerstag freitag
   demain hier lundi mardi mercredi jeudi vendredi domani ieri lunedi martedi mercoledi giovedi venerdi amanha ontem segunda terca quarta quinta sexta`
    .split(/\s+/)
    .filter(Boolean),
)

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'-]*/gu

interface Mention {
  words: string[]
  stems: string[]
  sentence: number
  atStart: boolean
}

function mentionsOf(s: Sentence): Mention[] {
  const out: Mention[] = []
  let run: { word: string; low: string; start: boolean }[] = []
  let lastEnd = 0
  const flush = () => {
    // Long runs are split into windows of up to three words.
    for (let i = 0; i < run.length; i++) {
      for (let n = 1; n <= Math.min(3, run.length - i); n++) {
        const part = run.slice(i, i + n)
        // A phrase neither starts nor ends with a number.
        if (/^\d/.test(part[0]!.low) || /^\d/.test(part[part.length - 1]!.low)) continue
        out.push({ words: part.map((p) => p.word), stems: part.map((p) => stem(p.low)), sentence: s.index, atStart: part[0]!.start })
      }
    }
    run = []
  }
  let first = true
  for (const m of s.text.matchAll(WORD)) {
    const gap = s.text.slice(lastEnd, m.index)
    if (/[^\s]/.test(gap)) flush()
    lastEnd = m.index + m[0].length
    const low = fold(m[0]).toLowerCase().replace(/'.*$/, '')
    const isStop = ALL_STOPWORDS.has(low) || WEAK.has(low) || (low.length < 3 && !/^[A-Z0-9]{2}$/.test(m[0]))
    if (isStop) flush()
    else run.push({ word: m[0], low, start: first })
    first = false
  }
  flush()
  return out
}

export interface KeyPhraseOptions {
  max: number
  /** Stems (word prefixes) of the template's focus: phrases touching them rank higher. */
  focus?: readonly string[]
  /**
   * For headlines: in how many of `parts` each phrase key occurs, so phrases every part shares
   * (the note's general subject) give way to what distinguishes this part.
   */
  contrast?: { spread: Map<string, number>; parts: number }
  /** Single Romance infinitives ("arreglar", "envoyer") are actions, not topics. */
  lang?: string
}

const INFINITIVE: Record<string, RegExp> = { es: /(?:ar|er|ir)$/, pt: /(?:ar|er|ir)$/, fr: /(?:er|ir|re)$/, it: /(?:are|ere|ire)$/, de: /^$/, en: /^$/ }

export function allMentions(sentences: readonly Sentence[]): Mention[] {
  return sentences.flatMap(mentionsOf)
}

export function keyPhrases(sentences: readonly Sentence[], options: KeyPhraseOptions): Phrase[] {
  const mentions = allMentions(sentences)
  if (mentions.length === 0) return []
  // How many sentences contain each stem: rare words weigh more.
  const df = new Map<string, number>()
  for (const s of sentences) for (const t of new Set(s.terms)) df.set(t, (df.get(t) ?? 0) + 1)
  const n = Math.max(1, sentences.length)
  const groups = new Map<string, { mentions: Mention[]; surfaces: Map<string, number> }>()
  for (const m of mentions) {
    const key = m.stems.join(' ')
    const g = groups.get(key) ?? { mentions: [] as Mention[], surfaces: new Map<string, number>() }
    g.mentions.push(m)
    // A word that only ever opens sentences is capitalised for that reason alone.
    const surface = m.atStart && !/^\p{Lu}{2,}/u.test(m.words[0]!) ? [m.words[0]!.toLowerCase(), ...m.words.slice(1)].join(' ') : m.words.join(' ')
    g.surfaces.set(surface, (g.surfaces.get(surface) ?? 0) + 1)
    groups.set(key, g)
  }
  // How often each word is said: phrases made of recurring words name what the talk is about.
  const wordFreq = new Map<string, number>()
  for (const s of sentences) for (const t of s.terms) wordFreq.set(t, (wordFreq.get(t) ?? 0) + 1)
  const short = sentences.length < 12
  const scored: Phrase[] = []
  for (const [key, g] of groups) {
    const stems = g.mentions[0]!.stems
    const count = g.mentions.length
    if (count < 2 && !short && stems.length === 1) continue
    const lone = g.mentions[0]!.words
    if (stems.length === 1 && lone[0]!.length >= 5 && INFINITIVE[options.lang ?? 'en']?.test(fold(lone[0]!).toLowerCase())) continue
    const recurrence = stems.reduce((sum, st) => sum + ((wordFreq.get(st) ?? 1) - 1), 0) / stems.length
    const rarity = stems.reduce((sum, st) => sum + Math.log(1 + n / (df.get(st) ?? 1)), 0) / stems.length
    let score = (count + 0.5 * recurrence) * (stems.length === 1 ? 0.8 : 1 + 0.5 * (stems.length - 1)) * Math.sqrt(rarity)
    if (options.focus?.some((f) => stems.some((st) => st.startsWith(f) || f.startsWith(st)))) score *= 1.5
    if (options.contrast) score *= Math.log(1 + options.contrast.parts / (options.contrast.spread.get(key) ?? 1))
    const text = [...g.surfaces].sort((a, b) => b[1] - a[1] || (/\p{Lu}/u.test(b[0][0]!) ? 1 : 0) - (/\p{Lu}/u.test(a[0][0]!) ? 1 : 0))[0]![0]
    scored.push({ text, key, stems, count, score, first: Math.min(...g.mentions.map((m) => m.sentence)) })
  }
  scored.sort((a, b) => b.score - a.score || a.first - b.first)
  const chosen: Phrase[] = []
  for (const p of scored) {
    // A phrase inside a chosen one (or the other way round) says the same thing twice; a longer
    // phrase said often enough replaces the single word it contains ("offline" -> "offline mode").
    const i = chosen.findIndex((c) => {
      const [small, big] = c.stems.length <= p.stems.length ? [c.stems, p.stems] : [p.stems, c.stems]
      return small.every((st) => big.includes(st))
    })
    if (i === -1) {
      if (chosen.length < options.max) chosen.push(p)
      continue
    }
    const c = chosen[i]!
    if (c.stems.length === 1 && p.stems.length > 1 && p.count >= 2 && p.count >= 0.25 * c.count && !chosen.some((x, k) => k !== i && x.key === p.key)) chosen[i] = p
  }
  return chosen
}

/** Phrase keys per part, for `contrast`. */
export function phraseSpread(parts: readonly (readonly Sentence[])[]): Map<string, number> {
  const spread = new Map<string, number>()
  for (const part of parts) {
    const keys = new Set(allMentions(part).map((m) => m.stems.join(' ')))
    for (const k of keys) spread.set(k, (spread.get(k) ?? 0) + 1)
  }
  return spread
}
