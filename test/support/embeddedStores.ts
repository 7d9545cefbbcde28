// The embedded default's two stores in a directory of their own, for suites that run a projection
// or the forwarder without a whole service.
import type { Test } from 'tap'
import { join } from 'node:path'
import { openSqliteEventStore } from '../../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../../adapters/embedded/documentStore.ts'
import { tempDir } from './tmp.ts'

/** An event store and a read-model store of the embedded default in a directory of their own, closed and removed at teardown. */
export function embeddedStores(t: Test) {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  t.teardown(() => events.close())
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'readmodels.db') })
  t.teardown(() => docs.close())
  return { events, docs }
}
