import t from 'tap'
import { join } from 'node:path'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { eventStoreConformance } from './conformance/eventStore.suite.ts'
import { tempDir } from './support/tmp.ts'
import { randomUUID } from 'node:crypto'

eventStoreConformance(t, 'sqlite', async () => {
  const tmp = tempDir()
  const store = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  return { store, cleanup: async () => { await store.close(); tmp.remove() } }
})

t.test('sqlite: events survive a reopen, and a second handle on the same file sees appends and conflicts', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const path = join(tmp.dir, 'events.db')
  const a = openSqliteEventStore({ path })
  await a.appendToStream('note-1', [{ id: randomUUID(), type: 'NoteCreated', data: { x: 1 } }], { expectedRevision: 'no_stream' })
  const b = openSqliteEventStore({ path, pollIntervalMs: 10 })
  await t.rejects(b.appendToStream('note-1', [{ id: randomUUID(), type: 'Again', data: {} }], { expectedRevision: 'no_stream' }))
  const ac = new AbortController()
  const seen: string[] = []
  const sub = (async () => {
    for await (const e of b.subscribeToAll({ signal: ac.signal })) {
      seen.push(e.type)
      if (seen.length === 2) break
    }
  })()
  await a.appendToStream('note-1', [{ id: randomUUID(), type: 'NoteRenamed', data: {} }], { expectedRevision: 0 })
  await sub
  t.same(seen, ['NoteCreated', 'NoteRenamed'], 'a subscription on another handle sees appends by polling')
  await a.close()
  await b.close()
  const c = openSqliteEventStore({ path })
  t.equal((await c.readStream('note-1')).currentRevision, 1)
  await c.close()
})
