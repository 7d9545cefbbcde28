// Deterministic speaker-name inference from what a note says and where it comes from, in the six
// languages (es, en, de, fr, it, pt). No voice analysis. Every candidate name carries its
// evidence; the confidence of a name for a speaker combines its pieces of evidence as
// independent clues (1 − Π(1 − wᵢ)). Weights (docs/speech.md, "Speakers"):
//
// | clue | weight |
// |---|---|
// | self-introduction, explicit ("my name is", "me llamo", "ich heiße", "je m'appelle", "mi chiamo", "meu nome é") | 0.9 |
// | self-introduction, short ("I'm", "soy", "ich bin", "je suis", "sono", "sou") | 0.7 |
// | addressed by another speaker ("thanks, X" → the previous speaker; "welcome X", "hi X", "X, …?" → the next one) | 0.5 each |
// | the title or show metadata names a person who also has transcript evidence | 0.4 |
// | a host named by the show metadata, assigned to the first speaker | 0.5 |
// | a guest named by the title or metadata, assigned to the only other speaker of two | 0.4 |
// | a name the user confirmed on earlier notes of the same source, with transcript evidence | 0.5 |
// | the name the roster has as first speaker on earlier notes, for this note's first speaker | 0.6 |
//
// A name is used by one speaker only: when two speakers want the same name, the stronger keeps
// it and the other falls back to its next candidate.
import type { Evidence, NameSuggestion } from './speakers.ts'
import type { SourceMetadata } from './sourceKey.ts'

export interface InferenceSegment {
  sequence: number
  speakerLabel: string | null
  text: string
}

export interface RosterPerson {
  name: string
  /** Earlier notes of the same source where the user confirmed this name. */
  notes: number
  /** Of those, how many had this person as the first speaker. */
  firstSpeakerNotes: number
}

export interface InferenceInput {
  title: string
  metadata: SourceMetadata | null
  segments: readonly InferenceSegment[]
  roster: readonly RosterPerson[]
}

export const WEIGHTS = {
  introStrong: 0.9,
  introShort: 0.7,
  addressed: 0.5,
  metadataSupport: 0.4,
  metadataHost: 0.5,
  metadataGuest: 0.4,
  rosterSupport: 0.5,
  rosterFirstSpeaker: 0.6,
} as const

// ---- name matching --------------------------------------------------------------------------

const UPPER = '\\p{Lu}'
const NAME_WORD = `${UPPER}[\\p{L}\\p{M}'’-]*[\\p{L}\\p{M}]`
const PARTICLE = '(?:de|del|de la|da|das|do|dos|di|du|van|von|der|le|la)'
/** One to three capitalised words, with the particles of the six languages between them. */
const NAME = `(${NAME_WORD}(?:\\s+(?:${PARTICLE}\\s+)?${NAME_WORD}){0,2})`

/** Capitalised words that follow "I'm", "soy"… and are not names. */
const NOT_NAMES = new Set(
  [
    'i', 'the', 'a', 'an', 'here', 'back', 'glad', 'happy', 'sorry', 'not', 'so', 'very', 'just', 'really', 'yes', 'no', 'okay', 'ok', 'well', 'sure',
    'everyone', 'everybody', 'all', 'today', 'now', 'also', 'still', 'and', 'but', 'from', 'with', 'your', 'our', 'my', 'this', 'that', 'it', 'we', 'you',
    'todos', 'todas', 'gente', 'yo', 'muy', 'bien', 'hoy', 'aquí', 'el', 'la', 'los', 'las', 'un', 'una', 'de', 'del', 'con', 'sí', 'también',
    'alle', 'ich', 'hier', 'heute', 'der', 'die', 'das', 'ein', 'eine', 'sehr', 'ja', 'nein', 'auch', 'und',
    'tous', 'je', 'moi', 'ici', 'le', 'les', 'très', 'oui', 'non', 'aussi', 'et', 'un', 'une',
    'tutti', 'io', 'qui', 'oggi', 'il', 'lo', 'gli', 'molto', 'sì', 'anche', 'e',
    'pessoal', 'eu', 'aqui', 'hoje', 'o', 'os', 'as', 'um', 'uma', 'muito', 'sim', 'não', 'também',
    // Openers that look like a name before a comma ("Well, what do you think?").
    'wait', 'what', 'why', 'how', 'who', 'where', 'when', 'exactly', 'perfect', 'great', 'cool', 'interesting', 'oh', 'ah', 'right', 'yeah', 'look',
    'listen', 'anyway', 'actually', 'hmm', 'bueno', 'pues', 'entonces', 'vale', 'mira', 'oye', 'claro', 'perfecto', 'genial', 'exacto', 'alors', 'bon',
    'bien', 'eh', 'parfait', 'allora', 'dunque', 'ecco', 'certo', 'perfetto', 'esatto', 'então', 'bem', 'olha', 'ótimo', 'exato', 'perfeito', 'gut',
    'nun', 'also', 'na', 'genau', 'richtig', 'klar', 'super', 'toll',
  ].map((w) => w.toLowerCase()),
)

/** A keyword pattern that ignores case letter by letter (the name after it must stay capitalised). */
const ci = (phrase: string) =>
  [...phrase]
    .map((ch) => {
      if (ch === ' ') return '\\s+'
      if (ch === "'") return "['’]"
      const lo = ch.toLowerCase()
      const up = ch.toUpperCase()
      if (lo === up) return ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
      // ß upper-cases to "SS": keep such letters as they are.
      return up.length === 1 && lo.length === 1 ? `[${lo}${up}]` : ch
    })
    .join('')

const BEFORE = "(?<![\\p{L}\\p{N}])"
const phrases = (list: string[]) => list.map(ci).join('|')

const INTRO_STRONG = phrases([
  'my name is', "my name's", 'me llamo', 'mi nombre es', 'ich heiße', 'ich heisse', 'mein name ist', "je m'appelle", 'mon nom est', 'mon prénom est',
  'mi chiamo', 'il mio nome è', 'meu nome é', 'me chamo', 'chamo-me',
])
const INTRO_SHORT = phrases(["i'm", 'i am', 'this is', 'soy', 'ich bin', 'hier ist', 'je suis', 'io sono', 'sono', 'eu sou', 'sou'])
/** The addressed person speaks next. */
const GREET_NEXT = phrases([
  'welcome to the show', 'welcome', 'hi', 'hello', 'hey', 'bienvenido', 'bienvenida', 'hola', 'willkommen', 'hallo', 'bienvenue', 'bonjour', 'salut',
  'benvenuto', 'benvenuta', 'ciao', 'bem-vindo', 'bem-vinda', 'olá', 'oi',
])
/** The thanked person just spoke. */
const THANKS_PREVIOUS = phrases(['thank you', 'thanks', 'gracias', 'muchas gracias', 'danke', 'vielen dank', 'merci', 'grazie', 'obrigado', 'obrigada'])
/** Titles naming a guest: "with X", "con X", "mit X", "avec X", "com X", "feat. X". */
const TITLE_GUEST = phrases(['interview with', 'conversation with', 'with', 'featuring', 'feat.', 'ft.', 'entrevista a', 'entrevista con', 'con', 'mit', 'avec', 'intervista a', 'com'])

const RE_INTRO_STRONG = new RegExp(`${BEFORE}(?:${INTRO_STRONG})\\s+${NAME}`, 'gu')
const RE_INTRO_SHORT = new RegExp(`${BEFORE}(?:${INTRO_SHORT})[,:]?\\s+${NAME}`, 'gu')
const RE_GREET = new RegExp(`${BEFORE}(?:${GREET_NEXT})(?:\\s+(?:back|de nuevo|again|zurück|di nuovo))?[,!]?\\s+${NAME}`, 'gu')
const RE_THANKS = new RegExp(`${BEFORE}(?:${THANKS_PREVIOUS})[,!]?\\s+${NAME}`, 'gu')
/** A segment that opens by naming someone and asks a question: "Ana, what do you think?" */
const RE_VOCATIVE_QUESTION = new RegExp(`^\\s*[¿¡]?${NAME},\\s+[^]*[?？]\\s*$`, 'u')
const RE_TITLE_GUEST = new RegExp(`${BEFORE}(?:${TITLE_GUEST})\\s+${NAME}`, 'gu')

function cleanName(raw: string): string | null {
  const words = raw.trim().split(/\s+/)
  // Drop trailing words that cannot belong to the name ("Ana Today" → "Ana").
  while (words.length > 0 && NOT_NAMES.has(words[words.length - 1]!.toLowerCase())) words.pop()
  if (words.length === 0 || NOT_NAMES.has(words[0]!.toLowerCase())) return null
  const name = words.join(' ')
  return name.length >= 2 && name.length <= 120 ? name : null
}

const quoteOf = (text: string) => {
  const t = text.trim().replace(/\s+/g, ' ')
  return t.length <= 200 ? t : `${t.slice(0, 197)}...`
}

const sameName = (a: string, b: string) => a.localeCompare(b, undefined, { sensitivity: 'base' }) === 0
/** "Ana" supports "Ana García" and the other way round. */
const nameMatches = (a: string, b: string) => {
  if (sameName(a, b)) return true
  const wa = a.split(/\s+/)
  const wb = b.split(/\s+/)
  const [short, long] = wa.length <= wb.length ? [wa, wb] : [wb, wa]
  return short.every((w, i) => long[i] !== undefined && sameName(w, long[i]!))
}

// ---- candidates -----------------------------------------------------------------------------

interface Clue {
  weight: number
  evidence: Evidence
}
type Candidates = Map<string, Map<string, { name: string; clues: Clue[] }>> // label → key → candidate

function add(c: Candidates, label: string, name: string, clue: Clue) {
  let byName = c.get(label)
  if (!byName) c.set(label, (byName = new Map()))
  // Keep the longest spelling of the same person ("Ana" and "Ana García").
  for (const [key, cand] of byName) {
    if (nameMatches(cand.name, name)) {
      if (name.length > cand.name.length) cand.name = name
      cand.clues.push(clue)
      byName.set(key, cand)
      return
    }
  }
  byName.set(name.toLowerCase(), { name, clues: [clue] })
}

const confidenceOf = (clues: readonly Clue[]) => 1 - clues.reduce((p, c) => p * (1 - c.weight), 1)

/** The nearest other speaker within `reach` segments before (-1) or after (+1) index i. */
function neighbour(segments: readonly InferenceSegment[], i: number, dir: -1 | 1, reach = 3): string | null {
  const me = segments[i]!.speakerLabel
  for (let k = 1; k <= reach; k++) {
    const s = segments[i + dir * k]
    if (!s) return null
    if (s.speakerLabel && s.speakerLabel !== me) return s.speakerLabel
  }
  return null
}

function matchesOf(re: RegExp, text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(re)) {
    const name = cleanName(m[1]!)
    if (name) out.push(name)
  }
  return out
}

export function inferSpeakerNames(input: InferenceInput): NameSuggestion[] {
  const segments = input.segments.filter((s) => s.text.trim().length > 0)
  const labels = [...new Set(input.segments.map((s) => s.speakerLabel).filter((l): l is string => !!l))].sort()
  const c: Candidates = new Map()

  segments.forEach((seg, i) => {
    const label = seg.speakerLabel
    const evidence: Evidence = { source: 'transcript', segment: seg.sequence, quote: quoteOf(seg.text) }
    if (label) {
      const strong = matchesOf(RE_INTRO_STRONG, seg.text)
      for (const name of strong) add(c, label, name, { weight: WEIGHTS.introStrong, evidence })
      for (const name of matchesOf(RE_INTRO_SHORT, seg.text)) if (!strong.some((s) => nameMatches(s, name))) add(c, label, name, { weight: WEIGHTS.introShort, evidence })
    }
    const addressed = (names: string[], target: string | null) => {
      if (!target) return
      for (const name of names) add(c, target, name, { weight: WEIGHTS.addressed, evidence })
    }
    addressed(matchesOf(RE_GREET, seg.text), neighbour(segments, i, 1))
    addressed(matchesOf(RE_THANKS, seg.text), neighbour(segments, i, -1) ?? neighbour(segments, i, 1))
    const vocative = RE_VOCATIVE_QUESTION.exec(seg.text)
    if (vocative) {
      const name = cleanName(vocative[1]!)
      if (name) addressed([name], neighbour(segments, i, 1))
    }
  })

  // Source metadata: the title's guest, the show's hosts and guests.
  const meta = input.metadata
  const metaNames: { name: string; role: 'host' | 'guest'; quote: string }[] = []
  for (const title of [input.title, meta?.episodeTitle].filter((t): t is string => !!t)) {
    for (const name of matchesOf(RE_TITLE_GUEST, title)) metaNames.push({ name, role: 'guest', quote: title })
  }
  for (const h of meta?.hosts ?? []) metaNames.push({ name: h, role: 'host', quote: `host: ${h}` })
  if (meta?.author && cleanName(meta.author) === meta.author.trim()) metaNames.push({ name: meta.author.trim(), role: 'host', quote: `author: ${meta.author.trim()}` })
  for (const g of meta?.guests ?? []) metaNames.push({ name: g, role: 'guest', quote: `guest: ${g}` })

  const labelWith = (name: string): string | null => {
    let best: { label: string; conf: number } | null = null
    for (const [label, byName] of c) {
      for (const cand of byName.values()) {
        if (!nameMatches(cand.name, name)) continue
        const conf = confidenceOf(cand.clues)
        if (!best || conf > best.conf) best = { label, conf }
      }
    }
    return best?.label ?? null
  }

  const firstLabel = segments.find((s) => s.speakerLabel)?.speakerLabel ?? null
  for (const m of metaNames) {
    const evidence: Evidence = { source: 'metadata', segment: null, quote: quoteOf(m.quote) }
    const supported = labelWith(m.name)
    if (supported) {
      add(c, supported, m.name, { weight: WEIGHTS.metadataSupport, evidence })
    } else if (m.role === 'host' && firstLabel) {
      add(c, firstLabel, m.name, { weight: WEIGHTS.metadataHost, evidence })
    } else if (m.role === 'guest' && labels.length === 2 && firstLabel) {
      add(c, labels.find((l) => l !== firstLabel)!, m.name, { weight: WEIGHTS.metadataGuest, evidence })
    }
  }

  // The roster: people the user confirmed on earlier notes of the same source.
  for (const p of input.roster) {
    const evidence: Evidence = { source: 'roster', segment: null, quote: p.name }
    const supported = labelWith(p.name)
    if (supported) add(c, supported, p.name, { weight: WEIGHTS.rosterSupport, evidence })
    else if (firstLabel && p.firstSpeakerNotes > 0 && p.firstSpeakerNotes * 2 >= p.notes) {
      add(c, firstLabel, p.name, { weight: WEIGHTS.rosterFirstSpeaker, evidence })
    }
  }

  // One name per speaker and one speaker per name, strongest first.
  const ranked = [...c].flatMap(([label, byName]) => [...byName.values()].map((cand) => ({ label, name: cand.name, conf: confidenceOf(cand.clues), clues: cand.clues })))
  ranked.sort((a, b) => b.conf - a.conf || a.label.localeCompare(b.label))
  const chosen = new Map<string, (typeof ranked)[number]>()
  for (const r of ranked) {
    if (chosen.has(r.label)) continue
    if ([...chosen.values()].some((x) => nameMatches(x.name, r.name))) continue
    chosen.set(r.label, r)
  }
  return labels.map((label) => {
    const r = chosen.get(label)
    if (!r) return { label, name: null, confidence: null, evidence: [] }
    return { label, name: r.name, confidence: Math.round(r.conf * 1000) / 1000, evidence: dedupe(r.clues.map((x) => x.evidence)) }
  })
}

function dedupe(evidence: Evidence[]): Evidence[] {
  const seen = new Set<string>()
  return evidence.filter((e) => {
    const key = `${e.source}|${e.segment}|${e.quote}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
