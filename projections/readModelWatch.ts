// A projection whose read model may disappear under it (the embedded file deleted, the MongoDB
// database dropped while the service runs). Its checkpoint lives in the same store as the read
// model, on purpose: the two are lost together, so a lost checkpoint is how the loss shows. The
// runner alone kept its position in memory and went on writing into the empty store, so the
// checkpoints never came back and the read model held only what came after the loss (the list
// showed 0 of 8,339 notes until a manual restart; issue 31).
//
// Here the checkpoint is looked at every `checkEveryMs`. Once seen, its absence is a loss: the
// loop stops, the read model is rebuilt from the log in bulk (`rebuild`: `rebuildInBulk` through
// an in-memory staging store on MongoDB), and the loop starts again from the rebuilt checkpoint.
// At start, a missing checkpoint with events in the log to apply is rebuilt the same way instead
// of being replayed one live batch at a time. During a rebuild the state is `rebuilding`, and
// /readyz says so. Where several instances run the projection (leases), only the one that can
// take the lease rebuilds (`exclusive`); the others keep following the shared checkpoint.
import type { DocumentStore } from '../ports/documentStore.ts'
import { START, readLog, type EventStore, type GlobalPosition } from '../ports/eventStore.ts'
import { CHECKPOINTS, startProjection, type LoopStatus, type Projection, type RunOptions, type RunningProjection } from './runner.ts'

export interface WatchOptions extends RunOptions {
  /** How often the checkpoint is looked at (READ_MODEL_CHECK_MS). */
  checkEveryMs: number
  /** Empties the projection's read model and replays the log into it, checkpoint last. */
  rebuild: (projection: Projection) => Promise<number>
  /** Whether this instance may rebuild now (holds or took the projection's lease); default yes. */
  exclusive?: () => Promise<boolean>
  log?: (message: string) => void
}

const hasCheckpoint = async (docs: DocumentStore, name: string) => (await docs.collection<{ _id: string }>(CHECKPOINTS).findOne({ _id: name })) !== null

async function hasWork(events: EventStore, projection: Projection): Promise<boolean> {
  return (await readLog(events, { maxCount: 1, ...(projection.filter ? { filter: projection.filter } : {}) })).length > 0
}

export function startWatchedProjection(projection: Projection, options: WatchOptions): RunningProjection & { rebuilds(): number } {
  const { events, docs, checkEveryMs, rebuild, exclusive = async () => true, log = () => {}, ...rest } = options
  const run: RunOptions = { events, docs, ...rest }
  let inner: RunningProjection | null = null
  let rebuilding: Promise<void> | null = null
  let rebuildingSince = ''
  let stopped = false
  let seen = false
  let rebuilt = 0
  let lastRebuildError: string | null = null
  // A rebuild that failed and is due again: why, how many times it failed, and when. Until it
  // succeeds the loop stays stopped: started, it would write its checkpoint at position 0 and
  // replay the whole log one live batch at a time, and no check would see a loss any more. A
  // rebuild replays the whole log, so one that keeps failing (a store away for long, a handler
  // that throws) waits a doubling pause, up to a minute, not just the next check.
  let retry: { why: string; failures: number; at: number } | null = null
  let endDone!: () => void
  const done = new Promise<void>((resolve) => (endDone = resolve))

  /** Rebuilds (when this instance may), then runs the loop. A failure is retried by a later check, after a growing pause. */
  const rebuildThenRun = (why: string) =>
    (rebuilding ??= (async () => {
      if (retry === null) rebuildingSince = new Date().toISOString()
      try {
        await inner?.stop()
        inner = null
        if (stopped) return
        if (await exclusive()) {
          const started = Date.now()
          log(`[projection ${projection.name}] ${why}: rebuilding its read model from the log in bulk`)
          const n = await rebuild(projection)
          rebuilt++
          lastRebuildError = null
          log(`[projection ${projection.name}] rebuilt from ${n} events in ${Date.now() - started} ms`)
        } else log(`[projection ${projection.name}] ${why}: another instance holds its lease and rebuilds it`)
        retry = null
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err)
        // Once per cause, not once per check while the store stays away.
        if (message !== lastRebuildError) log(`[projection ${projection.name}] rebuild failed, trying again (pauses doubling from ${checkEveryMs} ms up to 60 s): ${message}`)
        lastRebuildError = message
        const failures = (retry?.failures ?? 0) + 1
        retry = { why, failures, at: Date.now() + Math.min(60_000, checkEveryMs * 2 ** (failures - 1)) }
      } finally {
        if (!stopped && retry === null) inner = startProjection(projection, run)
        rebuilding = null
      }
    })())

  const check = async () => {
    if (stopped || rebuilding) return
    if (retry !== null) return void (Date.now() >= retry.at && (await rebuildThenRun(retry.why)))
    try {
      if (await hasCheckpoint(docs, projection.name)) return void (seen = true)
      // A loop past 'starting' has written its checkpoint (it upserts it first), so its absence
      // is a loss even when no check saw it in between: a rebuild's checkpoint can be lost
      // again at once (FerretDB drops a database's file while writes still reach it).
      if (inner && (seen || inner.status().state !== 'starting')) {
        seen = false
        await rebuildThenRun('its checkpoint is gone (the read-model store was lost)')
      }
    } catch {
      // The store does not answer: the loop reports that itself, and /readyz names the store.
    }
  }

  const boot = (async () => {
    try {
      if (!(await hasCheckpoint(docs, projection.name)) && (await hasWork(events, projection))) return void (await rebuildThenRun('no checkpoint at start'))
    } catch {
      // Stores not answering yet: the runner waits for them with its own backoff.
    }
    if (!stopped) inner = startProjection(projection, run)
  })()
  const timer = setInterval(() => void check(), checkEveryMs)
  timer.unref()

  const rebuildingStatus = (): LoopStatus => ({ state: 'rebuilding', since: rebuildingSince, retries: retry?.failures ?? 0, lastError: lastRebuildError })
  return {
    name: projection.name,
    rebuilds: () => rebuilt,
    position: (): GlobalPosition => (rebuilding || retry !== null ? START : (inner?.position() ?? START)),
    status: (): LoopStatus => (rebuilding || retry !== null ? rebuildingStatus() : (inner?.status() ?? { state: 'starting', since: new Date().toISOString(), retries: 0, lastError: lastRebuildError })),
    async waitFor(target, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      const timeout = () => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())
      await Promise.race([boot, timeout()])
      while (rebuilding && Date.now() < deadline) await Promise.race([rebuilding, timeout()])
      if (!inner) throw new Error(`projection ${projection.name} did not reach position ${target} within ${timeoutMs} ms (rebuilding its read model)`)
      return inner.waitFor(target, Math.max(1, deadline - Date.now()))
    },
    async stop() {
      stopped = true
      clearInterval(timer)
      await boot
      await rebuilding
      await inner?.stop()
      endDone()
    },
    done,
  }
}
