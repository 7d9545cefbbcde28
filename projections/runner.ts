// Runs projections: follows the global log from each projection's checkpoint, hands events to
// the projection in small batches, and stores the checkpoint after each batch in the same
// document store as the read model, in the same write batch. Where the store makes batches
// atomic (the embedded one) a batch's writes and its checkpoint commit together, and one commit
// per batch instead of one per document keeps the disk free for the event store's fsyncs.
// Where it does not (MongoDB), projections are idempotent per event, so a crash between a write
// and its checkpoint re-applies events that change nothing: nothing is skipped and nothing
// counts twice.
import type { DocumentStore } from '../ports/documentStore.ts'
import { countingCalls } from './countingCalls.ts'
import type { PublishedCheckpoints } from '../ports/analyticsPublisher.ts'
import { START, readLog, type EventFilter, type EventStore, type GlobalPosition, type RecordedEvent } from '../ports/eventStore.ts'

export interface Projection {
  readonly name: string
  readonly filter?: EventFilter
  /** Collections this projection writes; `rebuild` empties them. */
  readonly collections: readonly string[]
  /** Creates indexes; called before the first batch. */
  setup?(docs: DocumentStore): Promise<void>
  /** Applies events in global order. Re-applying an already applied event must change nothing. */
  handle(events: RecordedEvent[], docs: DocumentStore): Promise<void>
}

export const CHECKPOINTS = '_checkpoints'
type Checkpoint = { _id: string; position: GlobalPosition; updatedAt: string }

export async function readCheckpoint(docs: DocumentStore, name: string): Promise<GlobalPosition> {
  const cp = await docs.collection<Checkpoint>(CHECKPOINTS).findOne({ _id: name })
  return cp?.position ?? START
}

async function saveCheckpoint(docs: DocumentStore, name: string, position: GlobalPosition): Promise<void> {
  // Guarded so a slower, older writer can never move a checkpoint backwards.
  await docs
    .collection<Checkpoint>(CHECKPOINTS)
    .updateOne(
      { _id: name, $or: [{ position: { $lt: position } }, { position: { $exists: false } }] },
      { $set: { position, updatedAt: new Date().toISOString() } },
    )
}

/** Makes sure the checkpoint document exists, so saving it never needs an upsert. */
async function initCheckpoint(docs: DocumentStore, name: string): Promise<void> {
  await docs
    .collection<Checkpoint>(CHECKPOINTS)
    .updateOne({ _id: name }, { $setOnInsert: { position: START, updatedAt: new Date().toISOString() } }, { upsert: true })
}

export interface RunOptions {
  events: EventStore
  docs: DocumentStore
  batchSize?: number
  /** Called on every failure (the loop then backs off and resumes from its last applied event). */
  onError?: (err: unknown, projection: string) => void
  /** For tests: stop after this many events have been applied. */
  stopAfter?: number
  /**
   * How long the loop may keep failing without applying anything before it gives up
   * (LOOP_GIVE_UP_SECONDS). Default 300 s.
   */
  giveUpMs?: number
  /** Called once when the loop gives up; the service ends the process so its supervisor restarts it. */
  onGiveUp?: (err: unknown, projection: string) => void
  /**
   * How late the checkpoint of batches that wrote nothing may be saved (CHECKPOINT_IDLE_MS;
   * default CHECKPOINT_LAG_MS): a batch that writes saves it at once, with its writes.
   */
  checkpointIdleMs?: number
  /** Backoff bounds (jittered, doubling): defaults 100 ms and 5 s. */
  backoff?: { initialMs: number; maxMs: number }
  /** How long one batch may take before it counts as failed and is retried (LOOP_BATCH_TIMEOUT_SECONDS; default 120 s). */
  batchTimeoutMs?: number
  /**
   * Keeps the checkpoint elsewhere than the read-model store (the Kafka forwarder's lives with
   * what it published): read at start, saved after each batch's `handle` resolved, which then
   * runs outside a document-store batch.
   */
  checkpoints?: PublishedCheckpoints
}

/** What a supervised loop reports to /readyz. */
/** `rebuilding`: its read model is being rebuilt from the log after a loss (projections/readModelWatch.ts). */
export type LoopState = 'starting' | 'running' | 'retrying' | 'rebuilding' | 'failed' | 'stopped'
export interface LoopStatus {
  state: LoopState
  /** When it entered this state (ISO 8601). */
  since: string
  /** Failures since it last ran cleanly. */
  retries: number
  lastError: string | null
}

export interface RunningProjection {
  readonly name: string
  /** Position of the last applied event. */
  position(): GlobalPosition
  status(): LoopStatus
  /** Resolves once the projection has applied everything up to `position` (inclusive). */
  waitFor(position: GlobalPosition, timeoutMs?: number): Promise<void>
  stop(): Promise<void>
  /** Settles when the loop ends (stopped, gave up, or `stopAfter` reached). */
  readonly done: Promise<void>
}

const nextTick = Symbol('nextTick')
const checkpointTick = Symbol('checkpoint')
const saveTick = Symbol('save')

/** How late the checkpoint of batches that wrote nothing may be saved. */
export const CHECKPOINT_LAG_MS = 250
export const DEFAULT_GIVE_UP_MS = 300_000
export const DEFAULT_BATCH_TIMEOUT_MS = 120_000

/** `p`, or a rejection with `message` after `ms` (`p` is then abandoned; its late rejection is ignored). */
function withinDeadline<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  p.catch(() => {})
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() => clearTimeout(timer))
}

/** Full-jitter exponential backoff: a random wait up to min(max, initial * 2^attempt). */
export const jitteredBackoff = (attempt: number, initialMs: number, maxMs: number): number =>
  Math.round(Math.random() * Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 20)))

/** Resolves after `ms`, or at once when `signal` aborts. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => (clearTimeout(timer), signal?.removeEventListener('abort', done), resolve())
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })

const WRITE_METHODS = new Set(['insertOne', 'insertMany', 'insertManyIfAbsent', 'updateOne', 'updateMany', 'writeGuarded', 'replaceOne', 'deleteOne', 'deleteMany', 'createIndex', 'drop'])

/** The same store, counting the writes made through it. */
function countingWrites(store: DocumentStore): { store: DocumentStore; writes(): number } {
  let writes = 0
  const counted = countingCalls(store, (_collection, method) => {
    if (WRITE_METHODS.has(method)) writes++
  })
  return { store: counted, writes: () => writes }
}

/**
 * Runs a projection under supervision: any failure (the event store or the document store not
 * answering, a subscription cut, a batch that throws) is logged, the loop waits a jittered
 * backoff and resumes from the last applied event, opening a fresh subscription (the clients
 * reconnect on a new call). Nothing is skipped: the next subscription starts right after the
 * last event whose batch committed. A loop that keeps failing for `giveUpMs` without applying
 * anything reports `failed` and calls `onGiveUp`.
 */
export function startProjection(projection: Projection, options: RunOptions): RunningProjection {
  const { events, docs, batchSize = 500, onError = defaultOnError, stopAfter, giveUpMs = DEFAULT_GIVE_UP_MS, onGiveUp, batchTimeoutMs = DEFAULT_BATCH_TIMEOUT_MS, checkpointIdleMs = CHECKPOINT_LAG_MS } = options
  const { initialMs, maxMs } = options.backoff ?? { initialMs: 100, maxMs: 5000 }
  const ac = new AbortController()
  let position: GlobalPosition = START
  let applied = 0
  let status: LoopStatus = { state: 'starting', since: new Date().toISOString(), retries: 0, lastError: null }
  const enter = (state: LoopState, patch: Partial<LoopStatus> = {}) => {
    status = { ...status, ...patch, ...(status.state === state ? {} : { state, since: new Date().toISOString() }) }
  }
  const waiters = new Set<{ target: GlobalPosition; resolve: () => void }>()
  const wake = () => {
    for (const w of waiters) if (position >= w.target) (waiters.delete(w), w.resolve())
  }
  let initialised = false
  /** Marks the loop healthy again: it reached the stores, or applied a batch. */
  const healthy = () => enter('running', { retries: 0 })

  // A batch that wrote nothing (most projections ignore most events) need not move the
  // checkpoint at once: re-applying it after a crash changes nothing either. Its checkpoint is
  // saved with the next batch that writes, after `checkpointIdleMs` at the latest, and on stop.
  let savedPosition: GlobalPosition = START
  let savedAt = 0
  const external = options.checkpoints
  const save = (at: GlobalPosition) => (external ? external.save(projection.name, at) : saveCheckpoint(docs, projection.name, at))
  const apply = async (batch: RecordedEvent[]) => {
    const last = batch[batch.length - 1]!.globalPosition
    if (external) {
      await projection.handle(batch, docs)
      await external.save(projection.name, last)
      savedPosition = last
      savedAt = Date.now()
      return
    }
    await docs.writeBatch(async (tx) => {
      const counted = countingWrites(tx)
      await projection.handle(batch, counted.store)
      if (counted.writes() > 0 || Date.now() - savedAt >= checkpointIdleMs) {
        await saveCheckpoint(tx, projection.name, last)
        savedPosition = last
        savedAt = Date.now()
      }
    })
  }

  /** One subscription, from the last applied event; returns when stopped or `stopAfter` is reached, throws on any failure. */
  const runOnce = async (): Promise<void> => {
    if (!initialised) {
      if (!external) await initCheckpoint(docs, projection.name)
      await projection.setup?.(docs)
      position = external ? ((await external.read(projection.name)) ?? START) : await readCheckpoint(docs, projection.name)
      savedPosition = position
      // The stored checkpoint is as fresh as a save now: the idle lag counts from here.
      savedAt = Date.now()
      initialised = true
      wake()
    }
    // The event store answers before the loop counts as running (a subscription to a store that
    // is down may only fail on its first read).
    await readLog(events, { after: position, maxCount: 1, filter: projection.filter })
    healthy()
    // A filtered projection may go long without an event it follows: the store's checkpoints
    // (positions it has scanned up to, reported in step with the events) let its checkpoint
    // follow the log anyway, so a restart does not rescan everything after its last event.
    // Safe for a standby without the lease too: it only gets here with nothing left to apply (its
    // batches wait for the lease), so no followed event lies between the checkpoint it started
    // from, which the holder had applied, and the scanned position.
    let scanned: GlobalPosition = START
    let checkpointed: (() => void) | undefined
    const onCheckpoint = (at: GlobalPosition) => {
      scanned = Math.max(scanned, at)
      checkpointed?.()
    }
    /** Every event the subscription gave before reporting `scanned` has been applied: the position may move up to it. */
    const advanceToScanned = () => {
      if (scanned <= position) return
      position = scanned
      wake()
    }
    // Its own signal, aborted when this subscription ends for any reason: a read still pending
    // (a batch that failed while the next one was being read) must end too, or closing the
    // iterator waits behind it until the next event arrives.
    const run = new AbortController()
    const stopRun = () => run.abort()
    ac.signal.addEventListener('abort', stopRun, { once: true })
    const iterator = events.subscribeToAll({ after: position, filter: projection.filter, signal: run.signal, batchSize, onCheckpoint })[Symbol.asyncIterator]()
    let pending = iterator.next()
    /** The next event; while none comes, follows the reported checkpoints and saves them at most every `checkpointIdleMs`. */
    const nextEvent = async (): Promise<IteratorResult<RecordedEvent>> => {
      for (;;) {
        const lag = position > savedPosition ? Math.max(0, checkpointIdleMs - (Date.now() - savedAt)) : null
        let timer: NodeJS.Timeout | undefined
        const r = await Promise.race([
          pending,
          new Promise<typeof checkpointTick>((resolve) => (checkpointed = () => resolve(checkpointTick))),
          ...(lag === null ? [] : [new Promise<typeof saveTick>((resolve) => (timer = setTimeout(() => resolve(saveTick), lag)))]),
        ]).finally(() => clearTimeout(timer))
        checkpointed = undefined
        if (r === checkpointTick) advanceToScanned()
        else if (r === saveTick) {
          const at = position
          await withinDeadline(save(at), batchTimeoutMs, `saving the checkpoint did not finish within ${batchTimeoutMs} ms`)
          savedPosition = at
          savedAt = Date.now()
        } else return r
      }
    }
    try {
      while (!ac.signal.aborted) {
        const first = await nextEvent()
        if (first.done) {
          if (ac.signal.aborted) return
          throw new Error('the event store ended the subscription')
        }
        const batch = [first.value]
        // Take whatever is already available, without waiting for more: small batches when
        // live, large ones when catching up.
        for (;;) {
          if (batch.length >= batchSize || (stopAfter !== undefined && applied + batch.length >= stopAfter)) {
            pending = iterator.next()
            break
          }
          pending = iterator.next()
          const r = await Promise.race([pending, new Promise<typeof nextTick>((res) => setImmediate(() => res(nextTick)))])
          if (r === nextTick || r.done) break
          batch.push(r.value)
        }
        // A store call that never answers (a connection lost mid-request) must not hold the loop
        // for good: the batch fails after `batchTimeoutMs` and is retried from the checkpoint.
        await withinDeadline(apply(batch), batchTimeoutMs, `the batch of ${batch.length} event(s) did not finish within ${batchTimeoutMs} ms`)
        applied += batch.length
        position = batch[batch.length - 1]!.globalPosition
        advanceToScanned()
        if (status.state !== 'running') healthy()
        wake()
        if (stopAfter !== undefined && applied >= stopAfter) return
      }
    } finally {
      // A pending read of a broken subscription may reject later: nothing waits for it any more.
      pending.catch(() => {})
      run.abort()
      ac.signal.removeEventListener('abort', stopRun)
      await Promise.resolve(iterator.return?.()).catch(() => {})
    }
  }

  const supervise = async () => {
    let failingSince: number | null = null
    let attempt = 0
    try {
      while (!ac.signal.aborted) {
        const before = applied
        try {
          await runOnce()
          return
        } catch (err) {
          if (ac.signal.aborted) return
          if (applied > before) (failingSince = null, (attempt = 0))
          failingSince ??= Date.now()
          onError(err, projection.name)
          enter('retrying', { retries: status.retries + 1, lastError: err instanceof Error ? err.message : String(err) })
          if (Date.now() - failingSince >= giveUpMs) {
            enter('failed')
            onGiveUp?.(err, projection.name)
            return
          }
          await sleep(jitteredBackoff(attempt++, initialMs, maxMs), ac.signal)
        }
      }
    } finally {
      if (initialised && position > savedPosition) await save(position).catch((err) => onError(err, projection.name))
      if (status.state !== 'failed') enter('stopped')
    }
  }

  const done = supervise()

  return {
    name: projection.name,
    position: () => position,
    status: () => status,
    async waitFor(target, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        if (initialised && position >= target) return
        // A filtered projection never sees the events it does not follow, so its position may
        // stay below `target` for good: it has caught up when nothing it follows lies in
        // (position, target].
        if (initialised && projection.filter) {
          const [next] = await readLog(events, { after: position, maxCount: 1, filter: projection.filter }).catch(() => [undefined])
          if (next === undefined ? status.state === 'running' : next.globalPosition > target) return
        }
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`projection ${projection.name} did not reach position ${target} within ${timeoutMs} ms (at ${position}, ${status.state}${status.lastError ? `: ${status.lastError}` : ''})`)
        await new Promise<void>((resolve) => {
          const w = { target, resolve: () => (clearTimeout(timer), waiters.delete(w), resolve()) }
          // Woken by the batch that reaches the target, or re-checked after a short while.
          const timer = setTimeout(w.resolve, Math.min(left, projection.filter ? 100 : left))
          waiters.add(w)
          if (initialised) wake()
        })
      }
    },
    async stop() {
      ac.abort()
      await done
    },
    done,
  }
}

/**
 * Empties the projection's read models and replays the whole log into them. Run it while the
 * projection is stopped. Returns the number of events applied.
 */
export async function rebuildProjection(projection: Projection, options: Omit<RunOptions, 'stopAfter'>): Promise<number> {
  const { events, docs, batchSize = 2000 } = options
  await docs.writeBatch(async (tx) => {
    for (const c of projection.collections) await tx.collection(c).drop()
    await tx.collection(CHECKPOINTS).deleteOne({ _id: projection.name })
    await initCheckpoint(tx, projection.name)
    await projection.setup?.(tx)
  })
  let position = START
  let count = 0
  for (;;) {
    const batch = await events.readAll({ after: position, maxCount: batchSize, filter: projection.filter })
    if (batch.length === 0) break
    await docs.writeBatch(async (tx) => {
      await projection.handle(batch, tx)
      await saveCheckpoint(tx, projection.name, batch[batch.length - 1]!.globalPosition)
    })
    position = batch[batch.length - 1]!.globalPosition
    count += batch.length
  }
  return count
}

function defaultOnError(err: unknown, name: string) {
  console.error(`[projection ${name}]`, err)
}
