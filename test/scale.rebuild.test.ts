// Rebuilds in bulk on MongoDB (FerretDB here, which `npm test` starts): the log replayed into an
// in-memory staging store, then copied with bulk inserts. The result equals the event-by-event
// `rebuildProjection` on the same store, with a handful of writes per collection.
// MONGO_URL unset: nothing to run here; say so and pass.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { tempDir } from './support/tmp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { READ_MODEL_PROJECTIONS } from '../app/projections.ts'
import { rebuildProjection, CHECKPOINTS } from '../projections/runner.ts'
import { rebuildInBulk } from '../projections/bulkRebuild.ts'
import { countingCalls } from '../projections/countingCalls.ts'
import { noteStream } from '../domain/notes/note.ts'
import type { DocumentStore } from '../ports/documentStore.ts'

const mongoUrl = process.env.MONGO_URL

/** The store, counting the calls that reach the server with a write. */
function countingStore(store: DocumentStore): { store: DocumentStore; writes: () => number } {
  let writes = 0
  const WRITES = new Set(['insertOne', 'insertMany', 'insertManyIfAbsent', 'updateOne', 'updateMany', 'replaceOne', 'deleteOne', 'deleteMany', 'drop'])
  const wrapped = countingCalls(store, (_collection, method) => {
    if (WRITES.has(method)) writes++
  })
  return { store: wrapped, writes: () => writes }
}

if (!mongoUrl) {
  t.comment('MONGO_URL is not set: the bulk rebuild test needs MongoDB (npm test starts FerretDB)')
} else {
  t.test('a bulk rebuild equals a rebuild through the projection batches, in a handful of writes', async (t) => {
    const { openMongoDocumentStore, dropMongoDatabase } = await import('../adapters/mongodb/documentStore.ts')
    const tmp = tempDir()
    const suffix = randomUUID().replace(/-/g, '').slice(0, 10)
    const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
    const one = await openMongoDocumentStore(mongoUrl, `test_rb_one_${suffix}`)
    const bulk = await openMongoDocumentStore(mongoUrl, `test_rb_bulk_${suffix}`)
    t.teardown(async () => {
      await events.close()
      await one.close()
      await bulk.close()
      await dropMongoDatabase(mongoUrl, `test_rb_one_${suffix}`)
      await dropMongoDatabase(mongoUrl, `test_rb_bulk_${suffix}`)
      tmp.remove()
    })
    // 300 notes, each created and edited: two events per note for the notes projection.
    for (let i = 0; i < 300; i++) {
      const noteId = randomUUID()
      const accountId = `acct-${i % 7}`
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()
      await events.appendToStream(
        noteStream.of(noteId),
        [
          { id: randomUUID(), type: 'NoteCreated', data: { noteId, accountId, sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: `Note ${i}`, language: null, keepAudio: false, upload: { filename: `n${i}.wav`, contentType: 'audio/wav', declaredBytes: null }, jobId: null, reservationId: null, at } },
          { id: randomUUID(), type: 'NoteEdited', data: { title: `Renamed ${i}`, tags: ['t' + (i % 3)], at } },
        ],
        { expectedRevision: 'no_stream' },
      )
    }
    const notes = READ_MODEL_PROJECTIONS.find((p) => p.name === 'notes')!
    const slow = countingStore(one)
    await rebuildProjection(notes, { events, docs: slow.store })
    const fast = countingStore(bulk)
    const staging = openEmbeddedDocumentStore({ path: ':memory:' })
    t.teardown(() => staging.close())
    await rebuildInBulk(notes, { events, docs: fast.store, staging })

    for (const c of notes.collections) {
      const a = await one.collection(c).find({}, { sort: { _id: 1 } })
      const b = await bulk.collection(c).find({}, { sort: { _id: 1 } })
      t.same(b, a, `${c}: identical (${a.length} documents)`)
    }
    t.equal((await bulk.collection(CHECKPOINTS).findOne({ _id: 'notes' }))?.position, (await one.collection(CHECKPOINTS).findOne({ _id: 'notes' }))?.position, 'same checkpoint')
    t.ok((await one.collection('notes').findOne({ title: 'Renamed 5' })) !== null, 'the renames were applied')
    t.ok(fast.writes() <= 10, `bulk: ${fast.writes()} writes; event by event: ${slow.writes()}`)
    // The projection's own batches (rebuildProjection) are now one read and one guarded bulk write
    // per batch too (projections/batchedDocuments.ts): no longer several writes per event.
    t.ok(slow.writes() < 600, `rebuildProjection: ${slow.writes()} writes for 600 events, fewer than one per event`)
  })
}
