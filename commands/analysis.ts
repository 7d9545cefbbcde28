// Analyses and outlines of a note: the commands behind POST /v1/notes/{id}/analysis, GET
// /v1/notes/{id}/outline?generate=1 and the MCP tools generate_ai_notes / generate_outline.
//
// Analyses: 100 credits per template. The whole price is held in one reservation before anything
// is generated; each template that comes out is captured out of the hold and the rest is released
// (ledger events); if every template fails the answer is 502 llm_invalid_json with all
// credits back. Outline: reading is free; generating costs 50, refunded when the attempt fails.
// Refunds are never made here: a failed paid step is recorded on the ledger and refunded by the
// refund process manager (CreditCommands.settlePending).
import { randomUUID } from 'node:crypto'
import { DomainError, isDomainError } from '../domain/errors.ts'
import { PRICES } from '../domain/credits/prices.ts'
import { capturedChargeId } from '../domain/credits/ledger.ts'
import { analysisDecider, analysisStream, outlineProblems, type AnalysisCommand, type TemplateResult } from '../domain/analysis/analysis.ts'
import { attributionOf, audioDurationMs, speakerNamesIn } from '../domain/language/content.ts'
import { LanguageEngineError, type LanguageEngine } from '../ports/languageEngine.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import { AnalysisContent, type AnalysisList, type Outline, type Template } from '../contract/analysis.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'
import type { Caller } from './context.ts'
import type { AnalysisReads, NoteReads } from './reads.ts'

export interface AnalysisCommandsDeps {
  handler: CommandHandler
  credits: CreditCommands
  notes: Pick<NoteReads, 'ready'>
  analyses: Pick<AnalysisReads, 'list' | 'outline'>
  sync: ReadModelSync
  engine: LanguageEngine
  clock?: () => Date
  /** Templates generated at once (a remote engine answers them in parallel). */
  concurrency?: number
  log?: (message: string, err: unknown) => void
}

/** Thrown inside an outline's charged operation when another request recorded the outline first: this one is not paid for. */
class OutlineAlreadyGenerated extends Error {
  constructor() {
    super('an outline had already been generated')
  }
}

/** The engine's outline attempt failed (recorded as `attemptedAt` with `generated: false`, answered 200). */
class OutlineAttemptFailed extends Error {
  constructor(cause: unknown) {
    super(failureOf(cause).reason, { cause })
  }
}

/** What an engine failure is called in the report. */
function failureOf(err: unknown): { error: string; reason: string } {
  if (err instanceof LanguageEngineError) return { error: err.kind === 'invalid_output' ? 'llm_invalid_json' : 'engine_unavailable', reason: err.message }
  return { error: 'engine_failed', reason: err instanceof Error ? err.message : String(err) }
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}

export class AnalysisCommands {
  private readonly clock: () => Date
  constructor(private readonly deps: AnalysisCommandsDeps) {
    this.clock = deps.clock ?? (() => new Date())
  }

  private now = () => this.clock().toISOString()

  private async record(caller: Caller, noteId: string, command: AnalysisCommand) {
    const result = await this.deps.handler.handle(analysisStream.of(noteId), command, analysisDecider, { metadata: { requestId: caller.requestId, accountId: caller.accountId } })
    await this.deps.sync.waitFor('analysis', result.position)
    return result
  }

  /**
   * POST /v1/notes/{id}/analysis, MCP generate_ai_notes: generates (or regenerates) each template,
   * in the order given. Answers the persisted analyses with a report of what came out.
   */
  async generate(caller: Caller, noteId: string, templates: readonly Template[]): Promise<AnalysisList> {
    const { source } = await this.deps.notes.ready(caller.accountId, noteId)
    const cost = PRICES.analysis.credits
    // One hold for the whole request: concurrent requests each get all their templates or none,
    // instead of each taking a few and every one of them failing.
    const reservationId = randomUUID()
    try {
      await this.deps.credits.reserve(caller.accountId, { operation: PRICES.analysis.operation, amount: cost * templates.length, noteId, requestId: caller.requestId, reservationId })
    } catch (err) {
      if (isDomainError(err) && err.code === 'insufficient_credits') {
        throw new DomainError(
          'upgrade_required',
          `${templates.length} template(s) cost ${cost * templates.length} credits and ${String(err.extra.balance)} are left this month; upgrade the plan or wait for the next cycle.`,
          { balance: err.extra.balance, required: cost * templates.length },
        )
      }
      throw err
    }
    const charges = templates.map((template) => ({ template, chargeId: capturedChargeId(reservationId, template) }))
    let captured = 0
    const releaseRest = (reason: string) =>
      captured < cost * templates.length ? this.deps.credits.release(caller.accountId, reservationId, reason) : Promise.resolve()

    const results = await mapLimit(charges, this.deps.concurrency ?? 3, async ({ template, chargeId }): Promise<TemplateResult> => {
      try {
        const { draft, info } = await this.deps.engine.analyze(source, template)
        // Whatever the engine, what is stored is what the contract promises.
        const checked = AnalysisContent.safeParse(draft)
        if (!checked.success) throw new LanguageEngineError('invalid_output', `the engine's analysis does not fit the contract: ${checked.error.issues[0]?.message}`)
        return { ok: true, template, analysis: draft, ...info, chargeId }
      } catch (err) {
        if (!(err instanceof LanguageEngineError)) this.deps.log?.(`analysis ${template} of note ${noteId} failed`, err)
        return { ok: false, template, ...failureOf(err), ...this.deps.engine.info, chargeId }
      }
    })

    // Each capture is a pending charge: completed once the analyses are recorded, else refunded by
    // the refund process manager (a failure to record, or a crash before it).
    const paid: string[] = []
    try {
      for (const r of results) {
        if (!r.ok) continue
        await this.deps.credits.capture(caller.accountId, reservationId, cost, r.template, { pending: true })
        paid.push(r.chargeId)
        captured += cost
      }
    } finally {
      const failed = results.filter((r) => !r.ok).map((r) => `${r.template}: ${r.ok ? '' : r.reason}`)
      await releaseRest((failed.length ? `analysis failed for ${failed.join('; ')}` : 'analysis stopped before every template was captured').slice(0, 500))
    }
    await this.deps.credits.settlePending(caller.accountId, paid, () =>
      this.record(caller, noteId, { type: 'RecordAnalyses', noteId, accountId: caller.accountId, results, speakers: speakerNamesIn(source), attribution: attributionOf(source), now: this.now() }),
    )
    const ok = results.filter((r) => r.ok).map((r) => r.template as Template)
    const failed = results.flatMap((r) => (r.ok ? [] : [{ template: r.template as Template, error: r.error, message: r.reason }]))
    if (ok.length === 0) {
      throw new DomainError('llm_invalid_json', `Every requested template failed (${failed.map((f) => `${f.template}: ${f.message}`).join('; ')}); the credits were refunded.`, { failed })
    }
    const list = await this.deps.analyses.list(caller.accountId, noteId)
    return { ...list, report: { ok, failed } }
  }

  /**
   * GET /v1/notes/{id}/outline (MCP get_outline / generate_outline). Reading is free; with
   * `generate` on a note without an outline, one is made for 50 credits. A failed attempt is
   * refunded and shows as `attemptedAt` with `generated: false`.
   */
  async outline(caller: Caller, noteId: string, generate: boolean): Promise<Outline> {
    if (!generate) {
      await this.deps.notes.ready(caller.accountId, noteId)
      return this.deps.analyses.outline(caller.accountId, noteId)
    }
    const { source } = await this.deps.notes.ready(caller.accountId, noteId)
    const current = await this.deps.analyses.outline(caller.accountId, noteId)
    if (current.generated) return current
    const durationMs = audioDurationMs(source)
    let chargeId = ''
    try {
      // A failed attempt, and one another request made unnecessary, are refunded by the refund
      // process manager (CreditCommands.chargedOperation), never here.
      await this.deps.credits.chargedOperation(caller.accountId, { operation: PRICES.outline.operation, cost: PRICES.outline.credits, noteId, requestId: caller.requestId }, async (id) => {
        chargeId = id
        let made: Awaited<ReturnType<LanguageEngine['outline']>>
        try {
          made = await this.deps.engine.outline(source)
          const problems = outlineProblems(made.chapters, durationMs)
          if (problems.length > 0) throw new LanguageEngineError('invalid_output', `the outline does not hold: ${problems.join('; ')}`)
        } catch (err) {
          throw new OutlineAttemptFailed(err)
        }
        const result = await this.record(caller, noteId, { type: 'RecordOutline', noteId, accountId: caller.accountId, chapters: made.chapters, durationMs, ...made.info, chargeId, now: this.now() })
        if (result.events.length === 0) throw new OutlineAlreadyGenerated()
      })
    } catch (err) {
      // Another request made the outline meanwhile: this one is not needed, and not paid for.
      if (err instanceof OutlineAlreadyGenerated) return this.generatedOutline(caller, noteId)
      if (!(err instanceof OutlineAttemptFailed)) throw err
      const { reason } = failureOf(err.cause)
      if (!(err.cause instanceof LanguageEngineError)) this.deps.log?.(`outline of note ${noteId} failed`, err.cause)
      await this.record(caller, noteId, { type: 'RecordOutlineFailure', noteId, accountId: caller.accountId, reason: reason.slice(0, 500), ...this.deps.engine.info, chargeId, now: this.now() })
    }
    return this.deps.analyses.outline(caller.accountId, noteId)
  }

  /** The outline another request recorded, once the read model shows it (bounded wait). */
  private async generatedOutline(caller: Caller, noteId: string): Promise<Outline> {
    const deadline = Date.now() + 5000
    for (;;) {
      const o = await this.deps.analyses.outline(caller.accountId, noteId)
      if (o.generated || Date.now() > deadline) return o
      await new Promise((r) => setTimeout(r, 20))
    }
  }
}
