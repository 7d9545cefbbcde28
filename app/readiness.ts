// GET /readyz, answered from this process's parts: the event store answers (a one-event read,
// timed, with a deadline), each read model's projection with its checkpoint and how far it is
// behind the log, and the speech engine's status (what the start banner prints: engine build,
// instruction set, model, threads). Projections running in another process are read from their
// checkpoints in the read-model store.
import type { EventStore } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'
import type { Readiness } from '../commands/application.ts'
import { readCheckpoint, type RunningProjection } from '../projections/runner.ts'
import { READ_MODEL_PROJECTIONS } from './projections.ts'

/** Events counted behind a projection at most (the count is one read of the log). */
export const LAG_CAP = 1000
const STORE_DEADLINE_MS = 2000

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer))
}

export function readinessOf(deps: { events: EventStore; docs: DocumentStore; projections: RunningProjection[]; engine: SpeechEngine }): () => Promise<Readiness> {
  return async () => {
    const started = performance.now()
    const names = [...new Set([...READ_MODEL_PROJECTIONS.map((p) => p.name), ...deps.projections.map((p) => p.name)])]
    let eventStore: Readiness['eventStore']
    let projections: Readiness['projections'] = []
    try {
      const filters = new Map(READ_MODEL_PROJECTIONS.map((p) => [p.name, p.filter]))
      projections = await withDeadline(
        Promise.all(
          names.map(async (name) => {
            const running = deps.projections.find((p) => p.name === name)
            const position = running ? running.position() : await readCheckpoint(deps.docs, name)
            // What it has yet to apply: the events after its position that it follows.
            const ahead = await deps.events.readAll({ after: position, maxCount: LAG_CAP, filter: filters.get(name) })
            const st = running?.status()
            return { name, position, behind: ahead.length, behindAtLeast: ahead.length === LAG_CAP, inThisProcess: !!running, state: st?.state ?? null, retries: st?.retries ?? 0, lastError: st?.lastError ?? null }
          }),
        ),
        STORE_DEADLINE_MS,
      )
      eventStore = { reachable: true, latencyMs: Math.round(performance.now() - started), error: null }
    } catch (err) {
      eventStore = { reachable: false, latencyMs: null, error: (err as Error).message }
    }
    const e = deps.engine
    const st = e.status?.()
    const speech: Readiness['speech'] = st
      ? { engine: e.engine, provider: e.provider, model: e.model, state: st.state, summary: st.summary, reason: st.reason, details: st.details }
      : { engine: e.engine, provider: e.provider, model: e.model, state: 'remote', summary: `${e.engine} (${e.provider}), model ${e.model}`, reason: null, details: {} }
    // A loop that gave up makes the process unready (its supervisor restarts it); one that is retrying is reported, not failed.
    const failed = deps.projections.some((p) => p.status().state === 'failed')
    return { ready: eventStore.reachable && !failed, eventStore, projections, speech }
  }
}
