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
}

export function readModelSync(docs: DocumentStore, running: readonly RunningProjection[], timeoutMs = 5000, pollMs = 20): ReadModelSync {
  return {
    async waitFor(name, position) {
      if (position === null) return
      const local = running.find((p) => p.name === name)
      const deadline = Date.now() + timeoutMs
      // A projection here may be a standby (another instance holds its lease and writes): after a
      // short wait on it, the shared checkpoint is what counts.
      if (local && (await local.waitFor(position, Math.min(timeoutMs, 1000)).then(() => true, () => false))) return
      while (Date.now() < deadline) {
        if ((await readCheckpoint(docs, name)) >= position) return
        await new Promise((r) => setTimeout(r, pollMs))
      }
    },
  }
}
