// A command on a stream whose id was just drawn at random (`newStream`) decides without reading
// the stream first: a create costs its append and no read before it. The option is a hint, not a
// trust: a stream that exists after all makes the append conflict, and the retry decides on what
// is stored.
import t from 'tap'
import { join } from 'node:path'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import type { Decider } from '../domain/decider.ts'
import { DomainError } from '../domain/errors.ts'
import type { EventStore } from '../ports/eventStore.ts'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'

type Opened = { type: 'Opened'; data: { by: string } }
/** Opens a thing once; opening it again is refused. */
const opener: Decider<{ by: string }, Opened, { openedBy: string | null }> = {
  initialState: () => ({ openedBy: null }),
  evolve: (_s, e) => ({ openedBy: e.data.by }),
  decide: (c, s) => {
    if (s.openedBy !== null) throw new DomainError('invalid_state', `already opened by ${s.openedBy}`)
    return [{ type: 'Opened', data: { by: c.by } }]
  },
}

/** The store with a count of `readStream` calls per stream. */
function countingReads(inner: EventStore): { events: EventStore; reads: Map<string, number> } {
  const reads = new Map<string, number>()
  const events: EventStore = {
    ...inner,
    readStream: (stream, options) => {
      reads.set(stream, (reads.get(stream) ?? 0) + 1)
      return inner.readStream(stream, options)
    },
    appendToStream: inner.appendToStream.bind(inner),
  }
  return { events, reads }
}

t.test('given a stream that does not exist, when a newStream command runs, then it is appended without a read', async (t) => {
  const tmp = tempDir('new-stream-')
  const store = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  t.teardown(async () => (await store.close(), tmp.remove()))
  const { events, reads } = countingReads(store)
  const result = await new CommandHandler(events).handle('thing-1', { by: 'a' }, opener, { newStream: true })
  t.same([result.revision, result.state], [0, { openedBy: 'a' }])
  t.equal(reads.get('thing-1') ?? 0, 0, 'no read before the append')
  t.same((await store.readStream('thing-1')).events.map((e) => e.data), [{ by: 'a' }])
})

t.test('given a stream that exists after all, when a newStream command runs, then the append conflicts and the retry decides on the stored state', async (t) => {
  const tmp = tempDir('new-stream-')
  const store = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  t.teardown(async () => (await store.close(), tmp.remove()))
  // Another process opened it first: this handler has nothing cached.
  await new CommandHandler(store).handle('thing-2', { by: 'other process' }, opener)
  const { events, reads } = countingReads(store)
  const err = await new CommandHandler(events).handle('thing-2', { by: 'b' }, opener, { newStream: true }).catch((e: unknown) => e)
  t.ok(err instanceof DomainError && err.code === 'invalid_state', 'refused on the stored state')
  t.match((err as Error).message, /other process/)
  t.equal(reads.get('thing-2'), 1, 'read once, after the conflict')
  t.equal((await store.readStream('thing-2')).events.length, 1, 'nothing appended twice')
})

t.test('given a handler that has the stream cached, when a newStream command runs, then it decides on the cache, not on an empty state', async (t) => {
  const tmp = tempDir('new-stream-')
  const store = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  t.teardown(async () => (await store.close(), tmp.remove()))
  const handler = new CommandHandler(store)
  await handler.handle('thing-3', { by: 'a' }, opener)
  const err = await handler.handle('thing-3', { by: 'b' }, opener, { newStream: true }).catch((e: unknown) => e)
  t.ok(err instanceof DomainError && err.code === 'invalid_state')
})

t.test('given the service, when a note is created without an Idempotency-Key, then its stream is not read before its first event; with a key it is', async (t) => {
  let counted: ReturnType<typeof countingReads> | undefined
  const svc = await testService({ wrapEvents: (inner) => (counted = countingReads(inner)).events })
  t.teardown(() => svc.close())
  const { headers } = await svc.account('pro')
  const reads = counted!.reads
  const upload = await svc.inject({ method: 'POST', url: '/v1/notes', headers, payload: { filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: 1000 } })
  t.equal(upload.statusCode, 202, upload.body)
  const imported = await svc.inject({ method: 'POST', url: '/v1/notes', headers, payload: { audioUrl: 'https://podcasts.example.org/e1.mp3' } })
  t.equal(imported.statusCode, 202, imported.body)
  for (const r of [upload, imported]) t.equal(reads.get(`note-${r.json().noteId}`) ?? 0, 0, 'no read of the new note stream')

  const keyed = await svc.inject({ method: 'POST', url: '/v1/notes', headers: { ...headers, 'idempotency-key': 'k-1' }, payload: { filename: 'b.wav', contentType: 'audio/wav', fileSizeBytes: 1000 } })
  t.equal(keyed.statusCode, 202, keyed.body)
  t.ok((reads.get(`note-${keyed.json().noteId}`) ?? 0) >= 1, 'an id derived from a key may name a note made before: its stream is read')
  const again = await svc.inject({ method: 'POST', url: '/v1/notes', headers: { ...headers, 'idempotency-key': 'k-1' }, payload: { filename: 'b.wav', contentType: 'audio/wav', fileSizeBytes: 1000 } })
  t.equal(again.json().noteId, keyed.json().noteId, 'and the retried request gets the same note')

  for (const r of [upload, imported, keyed]) {
    const read = await svc.inject({ method: 'GET', url: `/v1/notes/${r.json().noteId}`, headers })
    t.equal(read.statusCode, 200, 'each note reads back')
  }
})
