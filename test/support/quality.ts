// Scores an analysis against the annotated corpus (test/fixtures/meetings.ts), per field.
// An extracted item matches an annotated one when it contains at least half of the annotated
// item's content terms (stemmed); matching is one-to-one, greedy by overlap. Owners and
// deadlines are scored on the action items: precision over the owners/deadlines the engine gave,
// recall over the annotated ones (an item the engine missed counts as a missed owner/deadline).
import { randomUUID } from 'node:crypto'
import { indexTerms } from '../../domain/search/terms.ts'
import type { AnalysisDraft, SourceTranscript } from '../../ports/languageEngine.ts'
import type { GoldMeeting } from '../fixtures/meetings.ts'

/** The meeting as a transcript; `speakers: false` drops the speaker labels (a transcript nobody diarized). */
export function transcriptOf(m: GoldMeeting, options: { speakers?: boolean } = {}): SourceTranscript {
  const keep = options.speakers ?? true
  return {
    noteId: randomUUID(),
    title: m.title,
    language: m.language,
    durationMs: m.lines.length * 9000,
    segments: m.lines.map(([speaker, text], i) => ({ id: randomUUID(), sequence: i, startMs: i * 9000, endMs: i * 9000 + 8500, speaker: keep ? speaker : null, speakerLabel: keep ? speaker : null, text })),
  }
}

export interface Counts {
  tp: number
  predicted: number
  gold: number
}

export const FIELDS = ['actionItems', 'assignee', 'deadline', 'decisions', 'questions'] as const
export type Field = (typeof FIELDS)[number]

const empty = (): Counts => ({ tp: 0, predicted: 0, gold: 0 })

function overlap(gold: string, predicted: string): number {
  const g = new Set(indexTerms(gold))
  const p = new Set(indexTerms(predicted))
  if (g.size === 0) return 0
  let n = 0
  for (const t of g) if (p.has(t)) n++
  return n / g.size
}

/** One-to-one pairs (gold index, predicted index) with overlap >= 0.5, best first. */
function match(gold: string[], predicted: string[]): [number, number][] {
  const candidates: [number, number, number][] = []
  gold.forEach((g, i) => predicted.forEach((p, j) => {
    const o = overlap(g, p)
    if (o >= 0.5) candidates.push([i, j, o])
  }))
  candidates.sort((a, b) => b[2] - a[2])
  const usedG = new Set<number>()
  const usedP = new Set<number>()
  const pairs: [number, number][] = []
  for (const [i, j] of candidates) {
    if (usedG.has(i) || usedP.has(j)) continue
    usedG.add(i)
    usedP.add(j)
    pairs.push([i, j])
  }
  return pairs
}

const norm = (s: string) =>
  s
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .trim()

/** A speaker letter matches "Speaker B" / "Hablante B"; a name matches when contained. */
function sameAssignee(gold: string, predicted: string): boolean {
  if (/^[A-Z]$/.test(gold)) return new RegExp(`(^|\\s)${gold}$`).test(predicted.trim())
  return norm(predicted).includes(norm(gold))
}

function sameDeadline(gold: string, predicted: string): boolean {
  const g = norm(gold).split(/\s+/)
  const p = norm(predicted)
  return g.every((w) => p.includes(w))
}

export function score(m: GoldMeeting, a: AnalysisDraft): Record<Field, Counts> {
  const out = Object.fromEntries(FIELDS.map((f) => [f, empty()])) as Record<Field, Counts>
  const pairs = match(
    m.actionItems.map((x) => x.text),
    a.actionItems.map((x) => x.text),
  )
  out.actionItems = { tp: pairs.length, predicted: a.actionItems.length, gold: m.actionItems.length }
  for (const field of ['assignee', 'deadline'] as const) {
    const c = empty()
    c.gold = m.actionItems.filter((x) => x[field] !== '').length
    c.predicted = a.actionItems.filter((x) => x[field] !== '').length
    for (const [i, j] of pairs) {
      const g = m.actionItems[i]![field]
      const p = a.actionItems[j]![field]
      if (g !== '' && p !== '' && (field === 'assignee' ? sameAssignee(g, p) : sameDeadline(g, p))) c.tp++
    }
    out[field] = c
  }
  out.decisions = { tp: match(m.decisions, a.decisions).length, predicted: a.decisions.length, gold: m.decisions.length }
  out.questions = { tp: match(m.questions, a.questions).length, predicted: a.questions.length, gold: m.questions.length }
  return out
}

export function add(into: Record<Field, Counts>, more: Record<Field, Counts>) {
  for (const f of FIELDS) {
    into[f].tp += more[f].tp
    into[f].predicted += more[f].predicted
    into[f].gold += more[f].gold
  }
}

export const precision = (c: Counts) => (c.predicted === 0 ? 1 : c.tp / c.predicted)
export const recall = (c: Counts) => (c.gold === 0 ? 1 : c.tp / c.gold)

export function table(totals: Record<Field, Counts>): string {
  const rows = FIELDS.map((f) => {
    const c = totals[f]
    return `${f.padEnd(12)} ${precision(c).toFixed(2).padStart(9)} ${recall(c).toFixed(2).padStart(6)}   (${c.tp} correct, ${c.predicted} extracted, ${c.gold} annotated)`
  })
  return [`${'field'.padEnd(12)} precision recall`, ...rows].join('\n')
}

export const emptyTotals = () => Object.fromEntries(FIELDS.map((f) => [f, empty()])) as Record<Field, Counts>
