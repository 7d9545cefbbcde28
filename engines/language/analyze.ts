// The local engine's analysis: honest extraction from the transcript, nothing invented.
// - summary and key points: sentences ranked by SumBasic (average probability of their content
//   words, re-weighted after each pick so the next pick covers something else), shaped by the
//   template's boosts and focus;
// - action items, decisions, questions: cue patterns of the six languages (cues.ts), with the
//   assignee (a name before the cue, the person addressed, or the speaker who commits) and the
//   deadline as said;
// - topics: key phrases; anchors: the exact start of each item's source segment;
// - debate sections: stance, argument, agreement and disagreement cues, with speaker and time;
// - a Mermaid mind map of the result.
import type { ActionItemDraft, AnalysisDraft, SectionItemDraft, SourceTranscript, SpokenBy } from '../../ports/languageEngine.ts'
import { ALL_STOPWORDS, detectLanguage, type Lang } from '../../domain/languages.ts'
import { fullTextOf } from '../../domain/notes/transcript.ts'
import { clip, fold, sentencesOf, speakerDisplay, tidy, type Sentence } from './text.ts'
import {
  AGREEMENT,
  ARGUMENT,
  COMMITMENT,
  DEADLINE,
  DECISION,
  DEFINITION,
  DISAGREEMENT,
  EXPLICIT_TASK,
  FIRST_PERSON_FUTURE,
  IDLE_QUESTION,
  LEAD_FILLER,
  META_TASK,
  NEGATION,
  NOT_A_TASK,
  OPEN_QUESTION,
  STANCE,
  TASK_FILLER,
  type Person,
} from './cues.ts'
import { keyPhrases } from './keyphrases.ts'
import { ASSIGNMENT_STEMS, BRANCH, listsOf, profileOf, withoutFacet, type ListMode, type TemplateProfile } from '../../domain/language/templates.ts'

const MAX_ITEM = 300

export interface SentenceFacts {
  question: boolean
  openQuestion: boolean
  decision: boolean
  action: ActionItemDraft | null
  /** The action is the speaker's own commitment ("I will...", "enviaré..."). */
  ownAction: boolean
  definition: boolean
  number: boolean
  idle: boolean
}

// ---- names ----------------------------------------------------------------------------------

const NON_NAMES = new Set(
  'everybody everyone someone somebody nobody anyone todos todas alguien nadie cada jemand niemand alle quelqu personne tous chacun qualcuno nessuno tutti ognuno alguem ninguem cada this that these those there here it they he she you we i'.split(
    ' ',
  ),
)
const NAME = /^\p{Lu}[\p{Ll}'-]+$/u
const CONJ = /^(?:y|and|und|et|e|&)$/i

function isName(word: string | undefined): word is string {
  if (!word || !NAME.test(word)) return false
  const low = fold(word).toLowerCase()
  return !ALL_STOPWORDS.has(low) && !NON_NAMES.has(low) && !NOT_A_TASK.has(low)
}

/** The name (or "Name and Name") that ends `prefix`, as said. */
function nameAtEnd(prefix: string): string | null {
  const words = prefix.trim().replace(/[,:;]$/, '').split(/\s+/).filter(Boolean)
  const last = words[words.length - 1]
  if (!isName(last)) return null
  const conj = words[words.length - 2]
  const before = words[words.length - 3]
  if (conj && CONJ.test(conj) && isName(before)) return `${before} ${conj} ${last}`
  // "Ana García will" — a surname after a first name.
  if (isName(conj) && words.length === 2) return `${conj} ${last}`
  return last
}

/** The sentence without the fillers it opens with ("OK, so", "Bueno, pues", "Sí,"). */
function withoutLead(s: Sentence): { text: string; offset: number } {
  const offset = LEAD_FILLER.exec(s.low)?.[0].length ?? 0
  return { text: s.text.slice(offset), offset }
}

/** "Ana, ..." or "..., Ana?" */
function vocative(s: Sentence): string | null {
  const start = /^(\p{Lu}[\p{Ll}'-]+)(?:\s+(\p{Lu}[\p{Ll}'-]+))?\s*,/u.exec(withoutLead(s).text)
  if (start && isName(start[1])) return start[2] && isName(start[2]) ? `${start[1]} ${start[2]}` : start[1]!
  const end = /,\s*(\p{Lu}[\p{Ll}'-]+)\s*[?.!]*$/u.exec(s.text)
  if (end && isName(end[1])) return end[1]!
  return null
}

// ---- action items ---------------------------------------------------------------------------

function deadlineIn(s: Sentence, lang: Lang): { text: string; start: number; end: number } | null {
  const m = DEADLINE[lang].exec(s.low)
  if (!m || m[1] === undefined) return null
  const start = m.index + m[0].length - m[1].length
  return { text: s.text.slice(start, start + m[1].length).trim(), start, end: start + m[1].length }
}

/** The task from `from` to the sentence end, without the deadline phrase, politeness and end punctuation. */
function taskText(s: Sentence, from: number, deadline: { start: number; end: number } | null): string {
  let text = s.text.slice(from)
  if (deadline && deadline.start >= from) text = s.text.slice(from, deadline.start) + s.text.slice(deadline.end)
  text = text
    .replace(/^\s*(?:please|por favor|bitte|s'il te plait|s'il vous plait|per favore)\b[,\s]*/i, '')
    .replace(/[,\s]*(?:please|por favor|bitte|per favore)\s*([?.!]*)$/i, '$1')
    .replace(/\s+/g, ' ')
    .replace(/\s+([,.;:!?])/g, '$1')
    .replace(/[\s,;:]*[?.!…]+["'»]*\s*$/, '')
    .trim()
  const filler = TASK_FILLER.exec(fold(text).toLowerCase())
  if (filler) text = text.slice(filler[0].length)
  return clip(tidy(text), MAX_ITEM)
}

const firstWordLow = (text: string) =>
  text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .match(/[\p{L}']+/u)?.[0] ?? ''

/** "talk to marketing", "hablar con Ana": talking is a task when it names whom to talk to (not "talk about X later"). */
const TALK_TO = /^(?:talk|speak|reach out|hablar|parlare|parler|falar|reden|sprechen)\s+(?:to|with|con|avec|com|mit|a)\s+\S/i

function usableTask(task: string): boolean {
  const first = firstWordLow(task)
  const talkTo = TALK_TO.test(fold(task))
  if (!first || (NOT_A_TASK.has(first) && !talkTo) || META_TASK.test(fold(task).toLowerCase())) return false
  const content = task.split(/\s+/).filter((w) => !ALL_STOPWORDS.has(firstWordLow(w)))
  return content.length >= 1 && task.split(/\s+/).length >= 2
}

interface Context {
  lang: Lang
  /** The speaker of the following segment when it differs: who usually answers a request. */
  nextSpeaker: (s: Sentence) => SpokenBy | null
}

/** Sentences whose action is the speaker's own commitment (set by actionOf). */
const OWN = new WeakSet<Sentence>()

function actionOf(s: Sentence, ctx: Context): ActionItemDraft | null {
  const { lang } = ctx
  const deadline = deadlineIn(s, lang)
  const deadlineText = deadline?.text ?? ''
  const self = speakerDisplay(s.segment, lang)
  const addressee = () => vocative(s) ?? speakerDisplay(ctx.nextSpeaker(s), lang)

  // "Action item: ..."
  EXPLICIT_TASK.lastIndex = 0
  const explicit = EXPLICIT_TASK.exec(s.low)
  if (explicit) {
    const from = explicit.index + explicit[0].length
    const rest = s.text.slice(from)
    const owner = /^(\p{Lu}[\p{Ll}'-]+)\s+(?:to|will|va a|debe|wird|soll|doit|deve|vai)\s/u.exec(rest)
    const task = taskText(s, owner ? from + owner[0].length : from, deadline)
    if (task) return { text: task, assignee: owner && isName(owner[1]) ? owner[1]! : '', deadline: deadlineText }
  }

  // The earliest (then longest) commitment cue decides.
  let best: { start: number; end: number; person: Person; subject?: { start: number; end: number } } | null = null
  for (const c of COMMITMENT[lang]) {
    c.re.lastIndex = 0
    for (const m of s.low.matchAll(c.re)) {
      const lead = /^[\s,;:¿¡]/.test(m[0]) ? 1 : 0
      const start = m.index + lead
      const end = m.index + m[0].length
      const better = !best || start < best.start || (start === best.start && end > best.end)
      if (!better) continue
      best = { start, end, person: c.person }
      if (c.person === 'subject') best.subject = { start, end: start + m[1]!.length }
    }
  }
  if (best) {
    const before = clauseTail(s.low.slice(Math.max(0, best.start - 12), best.start))
    const after = s.low.slice(best.end, best.end + 8)
    const negated = NEGATION.test(` ${before.split(/\s+/).slice(-2).join(' ')}`) || /^\s*(?:not|no|nicht|pas|non|nao)\b/.test(after)
    const task = taskText(s, best.end, deadline)
    if (!negated && usableTask(task)) {
      let person = best.person
      let assignee = ''
      if (best.subject) {
        const said = s.text.slice(best.subject.start, best.subject.end)
        const low = said.toLowerCase()
        if (low === 'i') person = 1
        else if (low === 'we') person = 'we'
        else if (low === 'you') person = 2
        else if (isName(said)) {
          person = 3
          // "Ana and Luis will": the whole pair.
          const pair = /(\p{Lu}[\p{Ll}'-]+)\s+(?:and|&)\s+$/u.exec(s.text.slice(0, best.subject.start))
          assignee = pair && isName(pair[1]) ? `${pair[1]} and ${said}` : said
        } else return null
      }
      if (person === 1) (assignee = self), OWN.add(s)
      else if (person === 2) assignee = addressee()
      else if (person === 3 && !assignee) {
        const name = nameAtEnd(s.folded.slice(0, best.start))
        if (!name) return null
        const at = s.folded.lastIndexOf(name, best.start)
        assignee = at >= 0 ? s.text.slice(at, at + name.length) : name
      }
      // A question that only asks ("will Ana send it?") is not a commitment, unless it is a request.
      if (s.text.includes('?') && person !== 2) return null
      return { text: task, assignee, deadline: deadlineText }
    }
  }

  // "Enviaré el informe", "preparerò", "enviarei": the speaker commits in the future tense.
  const future = FIRST_PERSON_FUTURE[lang]
  if (future && !s.text.includes('?')) {
    future.lastIndex = 0
    for (const m of s.low.matchAll(future)) {
      const verb = m[1]!
      const at = m.index + m[0].length - verb.length
      const said = s.text.slice(at, at + verb.length)
      if ((lang === 'es' || lang === 'it') && !/[áéíò]$/i.test(said)) continue
      const infinitive = verb.replace(/(a|e|i)r(?:e|o|ei|ai)$/, '$1r')
      if (NOT_A_TASK.has(infinitive) || NEGATION.test(` ${s.low.slice(Math.max(0, at - 6), at)}`)) continue
      const task = taskText(s, at, deadline)
      if (usableTask(task)) {
        OWN.add(s)
        return { text: task, assignee: self, deadline: deadlineText }
      }
    }
  }

  // With a deadline: "Marta, revisa el contrato antes del jueves" or "Luis envía el informe el lunes".
  if (deadline && !s.text.includes('?')) {
    const { text: bare, offset } = withoutLead(s)
    const voc = /^(\p{Lu}[\p{Ll}'-]+)\s*,\s*/u.exec(bare)
    if (voc && isName(voc[1])) {
      const task = taskText(s, offset + voc[0].length, deadline)
      if (usableTask(task)) return { text: task, assignee: voc[1]!, deadline: deadlineText }
    }
    const subj = /^(\p{Lu}[\p{Ll}'-]+)\s+(?=\p{Ll})/u.exec(bare)
    if (subj && isName(subj[1])) {
      const task = taskText(s, offset + subj[0].length, deadline)
      if (usableTask(task)) return { text: task, assignee: subj[1]!, deadline: deadlineText }
    }
  }
  return null
}

// ---- sentence facts -------------------------------------------------------------------------

/** The part of a text after its last clause break: a negation before a full stop belongs to another clause. */
const clauseTail = (text: string) => text.slice(Math.max(...['.', '!', '?', ';'].map((c) => text.lastIndexOf(c))) + 1)

const GREETING = /^(?:hi|hello|hey|good (?:morning|afternoon|evening)|hola|buenos dias|buenas(?: tardes)?|hallo|guten (?:morgen|tag)|bonjour|salut|ciao|buongiorno|ola|bom dia|boa tarde|thanks|thank you|gracias|danke|merci|grazie|obrigad[oa]|bye|adios|chao|tschuss|au revoir|arrivederci|tchau)\b/

export function factsOf(sentences: readonly Sentence[], lang: Lang): SentenceFacts[] {
  const ctx: Context = {
    lang,
    nextSpeaker: (s) => {
      for (let i = s.index + 1; i < sentences.length; i++) {
        const n = sentences[i]!
        if (n.segmentIndex === s.segmentIndex) continue
        return n.speaker && n.speaker !== s.speaker ? n.segment : null
      }
      return null
    },
  }
  return sentences.map((s) => {
    const stripped = s.low.replace(LEAD_FILLER, '').replace(/^[¿¡\s]+/, '')
    const isQuestion = /\?\s*["'»]*$/.test(s.text) || s.text.includes('¿')
    const idle = (s.wordCount < 4 && !isQuestion) || IDLE_QUESTION.test(stripped) || (GREETING.test(stripped) && s.terms.length <= 5)
    const action = idle ? null : actionOf(s, ctx)
    const decisionMatch = DECISION[lang].exec(s.low)
    // "No. We agreed last week...": a "no" that answers, in a clause of its own, negates nothing.
    const negatedDecision = !!decisionMatch && NEGATION.test(clauseTail(s.low.slice(Math.max(0, decisionMatch.index - 16), decisionMatch.index + 1)))
    const isRequest = !!action && isQuestion
    return {
      // A request ("Can you send me the report by Monday?") is an action item, not an open question.
      question: isQuestion && !idle && s.wordCount >= 4 && !isRequest,
      openQuestion: OPEN_QUESTION[lang].test(s.low) || negatedDecision,
      decision: !!decisionMatch && !negatedDecision && !isQuestion && s.wordCount >= 4,
      action,
      ownAction: !!action && OWN.has(s),
      definition: DEFINITION.test(s.low),
      number: /\d/.test(s.text),
      idle,
    }
  })
}

// ---- ranking --------------------------------------------------------------------------------

/** Does any of the sentence's words start with one of the stems? */
function touches(s: Sentence, stems: readonly string[]): number {
  if (stems.length === 0) return 0
  const words = s.low.match(/[\p{L}\p{N}]+/gu) ?? []
  let hits = 0
  for (const w of words) if (stems.some((st) => w.startsWith(st))) hits++
  return hits
}

/**
 * SumBasic: picks `count` sentences among `eligible`, each time the one whose content words are
 * the most probable (times the template's weight), then squares the probabilities of the words
 * it used so the next pick says something else.
 */
export function sumBasic(sentences: readonly Sentence[], eligible: (s: Sentence) => boolean, weight: (s: Sentence) => number, count: number): Sentence[] {
  const freq = new Map<string, number>()
  let total = 0
  for (const s of sentences) for (const t of s.terms) (freq.set(t, (freq.get(t) ?? 0) + 1), total++)
  if (total === 0) return []
  const p = new Map<string, number>()
  for (const [t, c] of freq) p.set(t, c / total)
  const pool = sentences.filter((s) => eligible(s) && s.terms.length > 0)
  const picked: Sentence[] = []
  const used = new Set<number>()
  while (picked.length < count) {
    let best: Sentence | null = null
    let bestScore = -1
    for (const s of pool) {
      if (used.has(s.index)) continue
      const unique = [...new Set(s.terms)]
      const avg = unique.reduce((sum, t) => sum + (p.get(t) ?? 0), 0) / unique.length
      const lengthFactor = s.wordCount < 6 ? 0.5 : s.wordCount > 45 ? 0.7 : 1
      const score = avg * lengthFactor * weight(s)
      if (score > bestScore) (best = s), (bestScore = score)
    }
    if (!best) break
    picked.push(best)
    used.add(best.index)
    for (const t of new Set(best.terms)) p.set(t, (p.get(t) ?? 0) ** 2)
  }
  return picked
}

const byTime = (a: Sentence, b: Sentence) => a.index - b.index

/** Without fillers at the start, capitalised, clipped. */
const itemText = (s: Sentence) => clip(tidy(withoutLead(s).text.replace(ANSWER_LEAD, '')), MAX_ITEM)
/** "No. We agreed...": the answer word that opens a reply is not part of the item. */
const ANSWER_LEAD = /^(?:no|nope|yes|yeah|s[ií]|nein|ja|non|oui|n[aã]o)[.!]\s+(?=\S)/i

function similar(a: readonly string[], b: readonly string[]): boolean {
  const A = new Set(a)
  const B = new Set(b)
  if (A.size === 0 || B.size === 0) return false
  let inter = 0
  for (const x of A) if (B.has(x)) inter++
  return inter / Math.min(A.size, B.size) >= 0.8
}

function dedupe<T>(items: T[], termsOf: (t: T) => string[]): T[] {
  const kept: T[] = []
  for (const it of items) if (!kept.some((k) => similar(termsOf(k), termsOf(it)))) kept.push(it)
  return kept
}

// ---- the analysis ---------------------------------------------------------------------------

export function analyzeLocally(t: SourceTranscript, template: string): AnalysisDraft {
  const profile = profileOf(template)
  const lang = detectLanguage(fullTextOf(t.segments), t.language)
  const sentences = sentencesOf(t.segments)
  const facts = factsOf(sentences, lang)
  const f = (s: Sentence) => facts[s.index]!
  const b = profile.boost
  const weight = (s: Sentence) => {
    const x = f(s)
    return (
      1 +
      (x.decision ? b.decisions : 0) +
      (x.action ? b.actions : 0) +
      (x.question || x.openQuestion ? b.questions : 0) +
      (x.number ? b.numbers : 0) +
      (x.definition ? b.definitions : 0) +
      Math.min(3, touches(s, profile.focus)) * b.focus * 0.5
    )
  }
  const statement = (s: Sentence) => !f(s).idle && !f(s).question

  // Summary: the best few sentences, in the order they were said. Minutes lead with outcomes.
  let summaryPicks: Sentence[]
  if (profile.summaryLeadsWithOutcomes) {
    const outcomes = sumBasic(sentences, (s) => statement(s) && (f(s).decision || !!f(s).action), weight, Math.min(2, profile.summarySentences))
    const rest = sumBasic(sentences, (s) => statement(s) && !outcomes.includes(s), weight, profile.summarySentences - outcomes.length)
    summaryPicks = [...outcomes, ...rest]
  } else {
    summaryPicks = sumBasic(sentences, statement, weight, profile.summarySentences)
  }
  const summary = summaryPicks.sort(byTime).map(itemText).join(' ')

  // Key points, named after the template's facets where they touch one.
  const keySentences = sumBasic(sentences, (s) => statement(s) && s.wordCount >= 5, weight, profile.keyPoints).sort(byTime)
  const keyPoints = keySentences.map((s) => {
    const facet = profile.facets.find((fc) => touches(s, fc.stems) > 0)
    return facet ? `${facet.label[lang]}: ${itemText(s)}` : itemText(s)
  })

  // Each template's lists hold what it promises (domain/language/templates.ts, TEMPLATE_LISTS).
  const lists = listsOf(template)
  const keep = (mode: ListMode, s: Sentence) => mode === 'all' || (mode === 'own' && f(s).ownAction) || (mode === 'assignments' && touches(s, ASSIGNMENT_STEMS) > 0)
  const actionSentences = dedupe(
    sentences.filter((s) => f(s).action && keep(lists.actionItems, s)),
    (s) => s.terms,
  ).slice(0, profile.maxActionItems)
  const decisionSentences = dedupe(
    sentences.filter((s) => f(s).decision && keep(lists.decisions, s)),
    (s) => s.terms,
  ).slice(0, profile.maxDecisions)
  const questionCandidates = dedupe(
    sentences.filter((s) => (f(s).question || f(s).openQuestion) && !f(s).idle && keep(lists.questions, s)),
    (s) => s.terms,
  )
  const questionSentences =
    questionCandidates.length <= profile.maxQuestions
      ? questionCandidates
      : sumBasic(questionCandidates, () => true, weight, profile.maxQuestions).sort(byTime)

  const topics = keyPhrases(sentences, { max: profile.topics, focus: profile.focus, lang }).map((p) => tidy(p.text))

  const draft: AnalysisDraft = {
    summary,
    keyPoints,
    actionItems: actionSentences.map((s) => f(s).action!),
    decisions: decisionSentences.map(itemText),
    questions: questionSentences.map(itemText),
    topics,
    anchors: {
      keyPoints: keySentences.map((s) => s.startMs),
      actionItems: actionSentences.map((s) => s.startMs),
      decisions: decisionSentences.map((s) => s.startMs),
      questions: questionSentences.map((s) => s.startMs),
    },
    sections: template === 'debate' ? debateSections(sentences, facts, weight) : null,
    mindmap: null,
  }
  // A section's speaker is the name in use or the letter (spec part 2); the map reads it as the text does.
  const shown = new Map(t.segments.map((s) => [s.speaker, speakerDisplay(s, lang)]))
  draft.mindmap = profile.mindmap ? mindmap(t.title, draft, profile, lang, (speaker) => shown.get(speaker) ?? speaker) : null
  return draft
}

// ---- debate ---------------------------------------------------------------------------------

function debateSections(sentences: readonly Sentence[], facts: readonly SentenceFacts[], weight: (s: Sentence) => number): NonNullable<AnalysisDraft['sections']> {
  const item = (s: Sentence): SectionItemDraft => ({ text: itemText(s), speaker: s.speaker, t: s.startMs })
  const pick = (re: RegExp, max: number) =>
    dedupe(
      sentences.filter((s) => !facts[s.index]!.idle && re.test(s.low)),
      (s) => s.terms,
    )
      .slice(0, max)
      .map(item)
  // Quotes: the most central statements, one speaker after another where possible.
  const central = sumBasic(sentences, (s) => !facts[s.index]!.idle && !facts[s.index]!.question && s.wordCount >= 8, weight, 12)
  const quotes: Sentence[] = []
  const speakers = new Set<string | null>()
  for (const s of central) if (!speakers.has(s.speaker) && quotes.length < 5) (quotes.push(s), speakers.add(s.speaker))
  for (const s of central) if (!quotes.includes(s) && quotes.length < 5) quotes.push(s)
  return {
    positions: pick(STANCE, 12),
    arguments: pick(ARGUMENT, 12),
    quotes: quotes.sort(byTime).map(item),
    agreements: pick(AGREEMENT, 10),
    disagreements: pick(DISAGREEMENT, 10),
  }
}

// ---- mind map -------------------------------------------------------------------------------

/** Mermaid node text: no characters that open a node shape, one line, short. */
const node = (text: string) =>
  clip(
    text
      .replace(/[()[\]{}<>"`|#;]/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
    60,
  ) || '-'

function mindmap(title: string, a: AnalysisDraft, profile: TemplateProfile, lang: Lang, speakerShown: (speaker: string) => string): string {
  const lines = ['mindmap', `  root((${node(title)}))`]
  const branch = (name: string, leaves: string[]) => {
    if (leaves.length === 0) return
    lines.push(`    ${node(name)}`)
    for (const leaf of leaves.slice(0, 6)) lines.push(`      ${node(leaf)}`)
  }
  const byTopic = () => {
    for (const topic of a.topics.slice(0, 6)) {
      const words = topic.toLowerCase().split(/\s+/)
      const leaves = a.keyPoints.filter((k) => words.some((w) => w.length > 3 && k.toLowerCase().includes(w)))
      branch(topic, leaves.map(withoutFacet))
      if (leaves.length === 0) lines.push(`    ${node(topic)}`)
    }
  }
  switch (profile.mindmap) {
    case 'meeting':
      branch(BRANCH.decisions![lang], a.decisions)
      branch(
        BRANCH.actions![lang],
        a.actionItems.map((x) => [x.assignee, x.text, x.deadline].filter(Boolean).join(' – ')),
      )
      branch(BRANCH.questions![lang], a.questions)
      byTopic()
      break
    case 'class':
      byTopic()
      branch(BRANCH.questions![lang], a.questions)
      break
    case 'debate':
      branch(BRANCH.positions![lang], (a.sections?.positions ?? []).map((p) => (p.speaker ? `${speakerShown(p.speaker)}: ${p.text}` : p.text)))
      branch(BRANCH.agreements![lang], (a.sections?.agreements ?? []).map((p) => p.text))
      branch(BRANCH.disagreements![lang], (a.sections?.disagreements ?? []).map((p) => p.text))
      byTopic()
      break
    case 'sales':
    case 'care':
      for (const fc of profile.facets) {
        const prefix = `${fc.label[lang]}: `
        branch(fc.label[lang], a.keyPoints.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)))
      }
      branch(BRANCH.actions![lang], a.actionItems.map((x) => x.text))
      byTopic()
      break
    default:
      byTopic()
  }
  return lines.join('\n')
}
