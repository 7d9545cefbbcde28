// Read-your-writes: a command that changed a read model waits until the projection writing it
// has applied the command's events, so the client's next GET sees them. In the process that
// runs the projection this is a wake-up; elsewhere (the API scaled apart from the projections)
// the projection's checkpoint is polled. Waiting is bounded: after the timeout the reply goes
// out anyway (and says nothing false: the write is stored either way).
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

export function readModelSync(docs: DocumentStore, running: readonly RunningProjection[], timeoutMs = 5000, pollMs = 20): ReadModelSync {
  return {
    async waitFor(name, position) {
      if (position === null) return
      const local = running.find((p) => p.name === name)
      if (local) return local.waitFor(position, timeoutMs).catch(() => {})
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        if ((await readCheckpoint(docs, name)) >= position) return
        await new Promise((r) => setTimeout(r, pollMs))
      }
    },
    async caughtUp(name, position, waitMs) {
      const local = running.find((p) => p.name === name)
      if (local) return local.waitFor(position, waitMs)
      const deadline = Date.now() + waitMs
      while ((await readCheckpoint(docs, name)) < position) {
        if (Date.now() > deadline) throw new Error(`projection ${name} did not reach position ${position} within ${waitMs} ms`)
        await new Promise((r) => setTimeout(r, Math.max(pollMs, 100)))
      }
    },
  }
}
