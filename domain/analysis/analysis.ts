// The analyses and the outline of one note, stream `analysis-<noteId>`. Every generation is an
// event carrying the template, the engine, its model and version, so regenerations keep their
// history; failed attempts are events too (with the charge they refer to, refunded in the
// ledger). The note itself stays in `note-<noteId>`: its pipeline and these features append
// concurrently without contending for one stream.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import type { AnalysisDraft, ChapterDraft } from '../language/content.ts'
import { streamKind } from '../streams.ts'

export const analysisStream = streamKind('analysis')

export type Generation = {
  engine: string
  model: string
  version: string
  /** The charge that paid for it (refunded when it failed). */
  chargeId: string
}

type Base = { noteId: string; accountId: string; at: string } & Generation

/**
 * `speakers`: the names in use when it was made, by label (labels without a name left out; absent
 * on analyses recorded before names reached the engines, which were all made without names).
 * `attribution`: which speaker had which line then (domain/language/content.ts `attributionOf`;
 * absent on analyses recorded before a line could move to another speaker).
 */
export type AnalysisGenerated = DomainEvent<'AnalysisGenerated', Base & { template: string; analysis: AnalysisDraft; speakers?: Record<string, string>; attribution?: string }>
export type AnalysisFailed = DomainEvent<'AnalysisFailed', Base & { template: string; error: string; reason: string }>
export type OutlineGenerated = DomainEvent<'OutlineGenerated', Base & { chapters: ChapterDraft[]; durationMs: number }>
export type OutlineFailed = DomainEvent<'OutlineFailed', Base & { reason: string }>
export type AnalysisEvent = AnalysisGenerated | AnalysisFailed | OutlineGenerated | OutlineFailed

export type TemplateResult = ({ ok: true; analysis: AnalysisDraft } | { ok: false; error: string; reason: string }) & { template: string } & Generation

export type AnalysisCommand =
  | { type: 'RecordAnalyses'; noteId: string; accountId: string; results: TemplateResult[]; speakers: Record<string, string>; attribution?: string; now: string }
  | ({ type: 'RecordOutline'; noteId: string; accountId: string; chapters: ChapterDraft[]; durationMs: number; now: string } & Generation)
  | ({ type: 'RecordOutlineFailure'; noteId: string; accountId: string; reason: string; now: string } & Generation)

export interface AnalysisState {
  accountId: string | null
  /** Generations so far per template. */
  generations: Record<string, number>
  outline: ChapterDraft[] | null
  outlineAttemptedAt: string | null
  /** Charges already recorded: a retried command records nothing twice. */
  charges: string[]
}

export const initialAnalysisState = (): AnalysisState => ({ accountId: null, generations: {}, outline: null, outlineAttemptedAt: null, charges: [] })

export function evolveAnalysis(s: AnalysisState, e: AnalysisEvent): AnalysisState {
  const next = { ...s, accountId: e.data.accountId, charges: [...s.charges, e.data.chargeId] }
  switch (e.type) {
    case 'AnalysisGenerated':
      return { ...next, generations: { ...s.generations, [e.data.template]: (s.generations[e.data.template] ?? 0) + 1 } }
    case 'AnalysisFailed':
      return next
    case 'OutlineGenerated':
      return { ...next, outline: e.data.chapters, outlineAttemptedAt: e.data.at }
    case 'OutlineFailed':
      return { ...next, outlineAttemptedAt: e.data.at }
  }
}

/**
 * Problems with an outline, empty when it holds: chapters in order, starting at 0, each ending
 * where the next starts (no gap, no overlap), the last ending with the audio, none empty.
 */
export function outlineProblems(chapters: readonly ChapterDraft[], durationMs: number): string[] {
  const problems: string[] = []
  if (chapters.length === 0) return durationMs > 0 ? ['no chapters'] : []
  if (chapters[0]!.startMs !== 0) problems.push('the first chapter does not start at 0')
  chapters.forEach((c, i) => {
    if (!Number.isInteger(c.startMs) || !Number.isInteger(c.endMs)) problems.push(`chapter ${i}: positions must be whole milliseconds`)
    if (c.endMs <= c.startMs) problems.push(`chapter ${i} is empty or reversed`)
    if (!c.headline.trim()) problems.push(`chapter ${i} has no headline`)
    const next = chapters[i + 1]
    if (next && next.startMs !== c.endMs) problems.push(`chapter ${i} ends at ${c.endMs} but chapter ${i + 1} starts at ${next.startMs}`)
  })
  if (chapters[chapters.length - 1]!.endMs !== durationMs) problems.push(`the last chapter ends at ${chapters[chapters.length - 1]!.endMs}, not at the end of the audio (${durationMs})`)
  return problems
}

function owned(s: AnalysisState, accountId: string) {
  if (s.accountId !== null && s.accountId !== accountId) throw new DomainError('not_found', 'No note with that id belongs to you.')
}

export function decideAnalysis(c: AnalysisCommand, s: AnalysisState): AnalysisEvent[] {
  owned(s, c.accountId)
  const base = { noteId: c.noteId, accountId: c.accountId, at: c.now }
  switch (c.type) {
    case 'RecordAnalyses':
      return c.results
        .filter((r) => !s.charges.includes(r.chargeId))
        .map((r): AnalysisEvent => {
          const gen = { engine: r.engine, model: r.model, version: r.version, chargeId: r.chargeId }
          return r.ok
            ? { type: 'AnalysisGenerated', data: { ...base, ...gen, template: r.template, analysis: r.analysis, speakers: c.speakers, ...(c.attribution ? { attribution: c.attribution } : {}) } }
            : { type: 'AnalysisFailed', data: { ...base, ...gen, template: r.template, error: r.error, reason: r.reason } }
        })
    case 'RecordOutline': {
      if (s.charges.includes(c.chargeId)) return []
      // One outline per note: a second one made concurrently is not recorded (its charge is refunded).
      if (s.outline !== null) return []
      const problems = outlineProblems(c.chapters, c.durationMs)
      if (problems.length > 0) throw new DomainError('llm_invalid_json', `The outline does not hold: ${problems.join('; ')}.`)
      return [{ type: 'OutlineGenerated', data: { ...base, engine: c.engine, model: c.model, version: c.version, chargeId: c.chargeId, chapters: c.chapters, durationMs: c.durationMs } }]
    }
    case 'RecordOutlineFailure':
      if (s.charges.includes(c.chargeId)) return []
      return [{ type: 'OutlineFailed', data: { ...base, engine: c.engine, model: c.model, version: c.version, chargeId: c.chargeId, reason: c.reason } }]
  }
}

export const analysisDecider: Decider<AnalysisCommand, AnalysisEvent, AnalysisState> = {
  decide: decideAnalysis,
  evolve: evolveAnalysis,
  initialState: initialAnalysisState,
}
