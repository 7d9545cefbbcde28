// Crypto-shredding in front of the event store (issue 16, item 6): a note's content is sealed
// under its own key, read back in the clear while the key lives, unreadable (ContentShredded)
// once it is destroyed, and no new content is ever sealed for a shredded note. Credits are
// never sealed.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { tempDir } from './support/tmp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openSqliteContentKeys } from '../adapters/sqlite/contentKeys.ts'
import { SHREDDED_TYPE, sealingKeyOf, shreddingEventStore } from '../adapters/crypto/shreddingEventStore.ts'

t.test('given sealed note events, when the key is destroyed, then they read as ContentShredded and nothing new is sealed', async (t) => {
  const tmp = tempDir('shred-')
  t.teardown(tmp.remove)
  const keys = openSqliteContentKeys({ path: join(tmp.dir, 'keys.db') })
  const raw = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  const store = shreddingEventStore(raw, keys, { cacheMs: 0 })
  t.teardown(async () => {
    await store.close()
    await keys.close()
  })
  const noteId = randomUUID()
  await store.appendToStream(`note-${noteId}`, [{ id: randomUUID(), type: 'NoteEdited', data: { title: 'Secret pelican plans', at: 'x' } }])
  await store.appendToStream(`credits-acc`, [{ id: randomUUID(), type: 'CreditsCharged', data: { noteId, cost: 1 } }])
  await store.appendToStream(`deliverable-d1`, [{ id: randomUUID(), type: 'DeliverableCreated', data: { noteId, title: 'Pelican memo' } }])

  t.same((await store.readStream(`note-${noteId}`)).events.map((e) => e.data), [{ title: 'Secret pelican plans', at: 'x' }], 'opened while the key lives')
  t.match((await raw.readStream(`note-${noteId}`)).events[0]!.data, { $sealed: 1, key: noteId }, 'sealed in the log')
  t.notOk(readFileSync(join(tmp.dir, 'events.db')).includes('pelican'), 'no clear text in the file')
  t.same((await raw.readStream('credits-acc')).events[0]!.data, { noteId, cost: 1 }, 'credits are never sealed')
  t.equal(sealingKeyOf('deliverable-d1', { type: 'DeliverableCreated', data: { noteId } }), noteId)
  t.equal(sealingKeyOf(`note-${noteId}`, { type: 'NoteDeleted', data: {} }), null, 'the tombstone stays readable')

  await keys.shred(noteId)
  await store.appendToStream(`note-${noteId}`, [{ id: randomUUID(), type: 'NoteDeleted', data: { accountId: 'acc', at: 'y' } }])
  const after = (await store.readStream(`note-${noteId}`)).events
  t.same(after.map((e) => [e.type, e.data]), [[SHREDDED_TYPE, {}], ['NoteDeleted', { accountId: 'acc', at: 'y' }]])
  t.same((await store.readAll({ filter: { categories: ['deliverable'] } })).map((e) => e.type), [SHREDDED_TYPE])
  await t.rejects(store.appendToStream(`note-${noteId}`, [{ id: randomUUID(), type: 'NoteEdited', data: { title: 'again', at: 'z' } }]), { code: 'not_found' }, 'no new key for a shredded note')
  t.equal((await keys.key(noteId, { create: true })).kind, 'shredded')
})

t.test('given 100 notes created at once, then their content keys share one commit (group commit), each distinct and durable', async (t) => {
  const tmp = tempDir()
  t.teardown(() => tmp.remove())
  const path = join(tmp.dir, 'keys.db')
  const keys = openSqliteContentKeys({ path })
  const ids = Array.from({ length: 100 }, () => randomUUID())
  const made = await Promise.all(ids.map((id) => keys.key(id, { create: true })))
  t.ok(made.every((k) => k.kind === 'key'))
  t.equal(new Set(made.map((k) => (k.kind === 'key' ? k.key.toString('hex') : ''))).size, 100, 'each note its own key')
  // Each commit appends at least one page to the write-ahead log: one commit per key was 100+ frames.
  const { default: Database } = await import('libsql')
  const other = new Database(path)
  const wal = other.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as { log: number }
  other.close()
  t.ok(wal.log < 20, `${wal.log} WAL frames for 100 new keys`)
  await keys.close()
  const again = openSqliteContentKeys({ path })
  t.teardown(() => again.close())
  const read = await Promise.all(ids.map((id) => again.key(id, { create: false })))
  t.same(read.map((k) => k.kind === 'key' && k.key.toString('hex')), made.map((k) => k.kind === 'key' && k.key.toString('hex')), 'the same keys after reopening')
})
