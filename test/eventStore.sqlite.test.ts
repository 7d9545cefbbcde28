import t from 'tap'
import { join } from 'node:path'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openSqlite } from '../adapters/sqlite/database.ts'
import { EventStoreTimeoutError, WrongExpectedRevisionError } from '../ports/eventStore.ts'
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

t.test('sqlite: a file written with schema version 1 (data, metadata, recorded_at columns) is migrated on open, positions kept', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const path = join(tmp.dir, 'events.db')
  // The version 1 layout, as the adapter wrote it before the event body moved into one column.
  const v1 = openSqlite(path, { synchronous: 'FULL' })
  v1.exec(`
    CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL,
      category TEXT NOT NULL, revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT,
      recorded_at TEXT NOT NULL, UNIQUE (stream, revision));
    CREATE INDEX events_by_category ON events (category, position);
    CREATE INDEX events_by_type ON events (type, position);`)
  const rows = [
    { id: randomUUID(), stream: 'note-1', category: 'note', revision: 0, type: 'NoteCreated', data: { title: 'Ñandú "quoted" \\ día', tags: ['a'], n: 1.5, nested: { x: null } }, metadata: null, at: '2026-01-01T00:00:00.000Z' },
    { id: randomUUID(), stream: 'credits-acc"1', category: 'credits', revision: 0, type: 'CreditsCharged', data: { cost: 3 }, metadata: { requestId: 'r1' }, at: '2026-01-01T00:00:01.000Z' },
    { id: randomUUID(), stream: 'note-1', category: 'note', revision: 1, type: 'NoteRenamed', data: {}, metadata: null, at: '2026-01-01T00:00:02.000Z' },
  ]
  const insert = v1.prepare('INSERT INTO events (id, stream, category, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
  for (const r of rows) insert.run(r.id, r.stream, r.category, r.revision, r.type, JSON.stringify(r.data), r.metadata ? JSON.stringify(r.metadata) : null, r.at)
  // An append that was rolled back after taking position 4..10: those positions stay unused.
  v1.exec("UPDATE sqlite_sequence SET seq = 10 WHERE name = 'events'")
  v1.close()

  const store = openSqliteEventStore({ path })
  const expected = rows.map((r, i) => ({
    id: r.id, streamName: r.stream, revision: r.revision, type: r.type, data: r.data, metadata: r.metadata ?? {}, recordedAt: r.at, globalPosition: i + 1,
  }))
  t.same(await store.readAll(), expected, 'every event reads back as it was')
  t.same((await store.readStream('note-1')).events, [expected[0], expected[2]])
  t.same(await store.readAll({ filter: { categories: ['credits'] } }), [expected[1]])
  t.same(await store.readAll({ filter: { eventTypes: ['NoteRenamed'] } }), [expected[2]])
  const r = await store.appendToStream('note-1', [{ id: randomUUID(), type: 'NoteFinalized', data: {} }], { expectedRevision: 1 })
  t.same(r, { nextExpectedRevision: 2, lastGlobalPosition: 11 }, 'the next position follows the old sequence')
  await t.rejects(store.appendToStream('note-1', [{ id: randomUUID(), type: 'X', data: {} }], { expectedRevision: 1 }), WrongExpectedRevisionError)
  await store.close()

  const raw = openSqlite(path, { synchronous: 'FULL' })
  t.equal((raw.prepare('PRAGMA user_version').raw(true).get() as [number])[0], 2)
  raw.close()
  const again = openSqliteEventStore({ path })
  t.equal((await again.readAll()).length, 4, 'reopening leaves a migrated file alone')
  await again.close()
})

t.test('sqlite: appends of one event-loop turn share a commit, and a refused one leaves the others stored', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const path = join(tmp.dir, 'events.db')
  const store = openSqliteEventStore({ path })
  await store.appendToStream('note-taken', [{ id: randomUUID(), type: 'NoteCreated', data: {} }], { expectedRevision: 'no_stream' })
  // Given 50 appends issued together, one of which expects a stream that already exists to be new.
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) =>
      store.appendToStream(i === 25 ? 'note-taken' : `note-${i}`, [{ id: randomUUID(), type: 'NoteCreated', data: { i } }], { expectedRevision: 'no_stream' }),
    ),
  )
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 49)
  const refused = results[25]!
  t.ok(refused.status === 'rejected' && refused.reason instanceof WrongExpectedRevisionError, 'the conflict is reported to its own caller')
  const positions = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.lastGlobalPosition] : []))
  t.same(positions, [...positions].sort((x, y) => x - y), 'positions follow the order of the calls')
  // Two appends to the same stream in one turn see each other, as if committed one after the other.
  const [first, second] = await Promise.allSettled([
    store.appendToStream('note-same', [{ id: randomUUID(), type: 'A', data: {} }], { expectedRevision: 'no_stream' }),
    store.appendToStream('note-same', [{ id: randomUUID(), type: 'B', data: {} }], { expectedRevision: 0 }),
  ])
  t.equal(first!.status, 'fulfilled')
  t.equal(second!.status, 'fulfilled')
  // An append accepted just before close is committed, not dropped.
  const last = store.appendToStream('note-last', [{ id: randomUUID(), type: 'A', data: {} }])
  await store.close()
  await last
  const reopened = openSqliteEventStore({ path })
  t.equal((await reopened.readAll({ maxCount: 1000 })).length, 1 + 49 + 2 + 1, 'every accepted append survived a reopen')
  await reopened.close()
})

t.test('sqlite: given another connection holds the write lock past the busy timeout, when events are appended, then the append fails as the store not answering (a 503 at the edge, not a 500), nothing of it is stored, and the same append succeeds once the lock is free', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const path = join(tmp.dir, 'events.db')
  const store = openSqliteEventStore({ path, busyTimeoutMs: 200 })
  t.teardown(() => store.close())
  const other = openSqlite(path, { synchronous: 'NORMAL' })
  t.teardown(() => other.close())
  const event = () => ({ id: randomUUID(), type: 'NoteCreated', data: {} })
  const alone = event()
  const together = [event(), event()]

  other.exec('BEGIN IMMEDIATE')
  // One append alone in its commit, then two sharing one (group commit): both ways out.
  const first = await store.appendToStream('note-a', [alone]).then(() => null, (e: unknown) => e)
  const both = await Promise.all(together.map((e, i) => store.appendToStream(`note-b${i}`, [e]).then(() => null, (err: unknown) => err)))
  for (const err of [first, ...both]) {
    t.type(err, EventStoreTimeoutError, 'the store did not answer in time')
    t.match((err as Error).message, /append/)
  }
  t.same((await store.readStream('note-a')).streamExists, false, 'a read is served while the lock is held (WAL), and shows nothing of the refused append')
  other.exec('COMMIT')

  await store.appendToStream('note-a', [alone])
  t.same((await store.readStream('note-a')).events.map((e) => e.id), [alone.id], 'the retried append is stored once')
})
