// Read-your-writes: a command that changed a read model waits until the projection writing it
// has applied the command's events, so the client's next GET sees them. In the process that
// runs the projection this is a wake-up; elsewhere (the API scaled apart from the projections)
// the projection's checkpoint is polled: one poll per projection for the whole process, however
// many requests wait (64 waiting requests each polling every 20 ms would be 3,200 reads a second
// on the read-model store). Waiting is bounded: after the timeout the reply goes out anyway (and
// says nothing false: the write is stored either way).
import type { DocumentStore } from '../ports/documentStore.ts'
import type { RunningProjection } from './runner.ts'
import { readCheckpoint } from './runner.ts'

export interface ReadModelSync {
  /** Resolves once projection `name` has applied the event at `position` (or after the timeout). */
  waitFor(name: string, position: number | null): Promise<void>
  /**
   * Resolves once projection `name` has applied the event at `position`; rejects after
   * `timeoutMs`. For start-up work that reads a read model (demo seeding), which after a lost
   * read-model store must wait for the rebuild, however long, rather than read a stale model.
   */
  caughtUp(name: string, position: number, timeoutMs: number): Promise<void>
}

type Waiter = { position: number; resolve: () => void }

export function readModelSync(docs: DocumentStore, running: readonly RunningProjection[], timeoutMs = 5000, pollMs = 20): ReadModelSync {
  const waiting = new Map<string, Set<Waiter>>()
  const seen = new Map<string, number>()

  /** The one poll loop of `name`: runs while anyone waits on it. */
  const poll = async (name: string, waiters: Set<Waiter>) => {
    while (waiters.size > 0) {
      const at = await readCheckpoint(docs, name).catch(() => seen.get(name) ?? -1)
      seen.set(name, at)
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

  return {
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
}
