// Read-your-writes: a client's read after its write sees the write. Either the command waits
// until the projection writing the read model has applied its events (`waitFor`), or, cheaper,
// the command records its position for the account (`wrote`) and answers at once from its own
// events, and the account's next read of that read model waits only if the projection has not
// got there yet (`readable`): the wait moves from every write to the few reads that race one.
// In the process that runs the projection this is a wake-up; elsewhere (the API scaled apart
// from the projections) the projection's checkpoint is polled: one poll per projection for the
// whole process, however many requests wait (64 waiting requests each polling every 20 ms would be 3,200 reads a second
// on the read-model store). Waiting is bounded: after the timeout the reply goes out anyway (and
// says nothing false: the write is stored either way).
import type { DocumentStore } from '../ports/documentStore.ts'
import type { RunningProjection } from './runner.ts'
import { CHECKPOINTS } from './runner.ts'

/** A projection's checkpoint, or null when the read-model store holds none. */
async function checkpointOf(docs: DocumentStore, name: string): Promise<number | null> {
  const cp = await docs.collection<{ _id: string; position: number }>(CHECKPOINTS).findOne({ _id: name })
  return cp ? cp.position : null
}

export interface ReadModelSync {
  /** Resolves once projection `name` has applied the event at `position` (or after the timeout). */
  waitFor(name: string, position: number | null): Promise<void>
  /**
   * Resolves once projection `name` has applied the event at `position`; rejects after
   * `timeoutMs`. For start-up work that reads a read model (demo seeding), which after a lost
   * read-model store must wait for the rebuild, however long, rather than read a stale model.
   */
  caughtUp(name: string, position: number, timeoutMs: number): Promise<void>
  /**
   * Read-your-writes without holding the write's answer: records that `scope` (an account) wrote
   * `position` for projection `name`, and returns at once. The scope's next read of that read
   * model (`readable`) waits for it; a reader who wrote nothing since waits for nothing.
   *
   * Returns null, unless the projection trails this write by more than `maxLagPositions`
   * log positions: then a promise that resolves once it is back within that distance (or after
   * the timeout). The back-pressure that waiting on every write gave: without it a burst of
   * writes outruns a slow projection (minutes behind on FerretDB), and the reads that follow wait
   * out their timeout and miss what was written.
   */
  wrote(scope: string, name: string, position: number | null): Promise<void> | null
  /**
   * Resolves once projection `name` has applied every position `scope` wrote for it in this
   * process (or after the timeout); null, without a promise, when there is nothing to wait for.
   */
  readable(scope: string, name: string): Promise<void> | null
}

/** How far a projection may trail a write that answers without waiting for it (`wrote`). */
export const MAX_LAG_POSITIONS = 256

/** Scopes whose pending write positions are remembered at most; the oldest go first (their reads then wait for nothing). */
const PENDING_SCOPES = 100_000

type Waiter = { position: number; resolve: () => void }

export interface ReadModelSyncOptions {
  /** The longest a read or a write waits for a projection before it goes on. */
  timeoutMs?: number
  /** How often a waited-on projection's checkpoint is read. */
  pollMs?: number
  /** How far a projection may trail a write before the write waits (READ_MODEL_MAX_LAG). */
  maxLagPositions?: number
}

export function readModelSync(
  docs: DocumentStore,
  running: readonly RunningProjection[],
  { timeoutMs = 5000, pollMs = 20, maxLagPositions = MAX_LAG_POSITIONS }: ReadModelSyncOptions = {},
): ReadModelSync {
  const waiting = new Map<string, Set<Waiter>>()
  const seen = new Map<string, number>()

  /** The one poll loop of `name`: runs while anyone waits on it. */
  const poll = async (name: string, waiters: Set<Waiter>) => {
    while (waiters.size > 0) {
      const found = await checkpointOf(docs, name).catch(() => seen.get(name) ?? -1)
      // A checkpoint seen before and gone now: the read-model store was lost and the read model
      // is being rebuilt. Nothing to wait for: each wait would last its whole timeout (every note
      // command waited 5 s on position -1; issue 31), and /readyz says not ready meanwhile. One
      // never seen, of a projection another process runs, belongs to one that has not started yet:
      // that is waited for.
      if (found === null && (seen.has(name) || running.some((p) => p.name === name))) {
        for (const w of waiters) (waiters.delete(w), w.resolve())
        break
      }
      const at = found ?? -1
      if (found !== null) seen.set(name, at)
      for (const w of waiters) if (at >= w.position) (waiters.delete(w), w.resolve())
      if (waiters.size > 0) await new Promise((r) => setTimeout(r, pollMs))
    }
    waiting.delete(name)
  }

  const viaCheckpoint = (name: string, position: number, ms: number) =>
    new Promise<void>((resolve) => {
      if ((seen.get(name) ?? -1) >= position) return resolve()
      const w: Waiter = { position, resolve: () => (clearTimeout(timer), resolve()) }
      const timer = setTimeout(() => (waiting.get(name)?.delete(w), resolve()), ms)
      let waiters = waiting.get(name)
      if (!waiters) {
        waiting.set(name, (waiters = new Set()))
        waiters.add(w)
        void poll(name, waiters)
      } else waiters.add(w)
    })

  // scope -> projection -> the highest position the scope wrote for it and has not yet seen applied.
  const pending = new Map<string, Map<string, number>>()
  /** Whether projection `name` is known (here, or by its last checkpoint read) to have applied `position`. */
  const known = (name: string) => Math.max(running.find((p) => p.name === name)?.position() ?? -1, seen.get(name) ?? -1)
  const applied = (name: string, position: number) => known(name) >= position

  const sync: ReadModelSync = {
    wrote(scope, name, position) {
      if (position === null || applied(name, position)) return null
      let byName = pending.get(scope)
      if (byName) pending.delete(scope) // re-inserted last: the map's order is the eviction order
      else byName = new Map()
      byName.set(name, Math.max(position, byName.get(name) ?? -1))
      pending.set(scope, byName)
      if (pending.size > PENDING_SCOPES) pending.delete(pending.keys().next().value!)
      // Apart from the projection, what is known is the last checkpoint read, which may be old: the
      // first write past the distance then waits one poll, which brings it up to date.
      return position - known(name) > maxLagPositions ? sync.waitFor(name, position - maxLagPositions) : null
    },
    readable(scope, name) {
      const position = pending.get(scope)?.get(name)
      if (position === undefined) return null
      // Forgotten once applied, unless a later write came in meanwhile.
      const forget = () => {
        const byName = pending.get(scope)
        if (byName?.get(name) !== position) return
        byName.delete(name)
        if (byName.size === 0) pending.delete(scope)
      }
      if (applied(name, position)) return (forget(), null)
      return sync.waitFor(name, position).then(forget)
    },
    async waitFor(name, position) {
      if (position === null) return
      const local = running.find((p) => p.name === name)
      const deadline = Date.now() + timeoutMs
      // A projection here may be a standby (another instance holds its lease and writes): after a
      // short wait on it, the shared checkpoint is what counts.
      if (local && (await local.waitFor(position, Math.min(timeoutMs, 1000)).then(() => true, () => false))) return
      await viaCheckpoint(name, position, Math.max(0, deadline - Date.now()))
    },
    async caughtUp(name, position, waitMs) {
      const local = running.find((p) => p.name === name)
      if (local) return local.waitFor(position, waitMs)
      // Run by another process (an `api` replica): its shared checkpoint, as read-your-writes
      // waits for it. A filtered projection's checkpoint may never reach a position past its last
      // event, and only the process running it knows its filter, so this waits no longer than a
      // read-your-writes wait instead of the rebuild's whole allowance.
      await viaCheckpoint(name, position, Math.min(waitMs, timeoutMs))
    },
  }
  return sync
}
