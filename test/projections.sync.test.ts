// Read-your-writes in an API process apart from the projections: the checkpoint is polled once
// per projection for the whole process, not once per waiting request (64 waiting requests, each
// polling every 20 ms, were 3,200 reads a second on the read-model store).
import t from 'tap'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { CHECKPOINTS } from '../projections/runner.ts'
import { readModelSync } from '../projections/sync.ts'
import { countingCalls } from '../projections/countingCalls.ts'

t.test('given 64 requests waiting on one projection, when its checkpoint moves, then all return and the checkpoint was read by one poll loop', async (t) => {
  const docs = openEmbeddedDocumentStore({ path: ':memory:' })
  t.teardown(() => docs.close())
  await docs.collection(CHECKPOINTS).insertOne({ _id: 'notes', position: 10 })
  let reads = 0
  const counted = countingCalls(docs, (collection, method) => {
    if (collection === CHECKPOINTS && method === 'findOne') reads++
  })
  const sync = readModelSync(counted, [], { timeoutMs: 5000, pollMs: 20 })
  const started = Date.now()
  const all = Promise.all(Array.from({ length: 64 }, (_, i) => sync.waitFor('notes', 11 + (i % 4))))
  await new Promise((r) => setTimeout(r, 200))
  await docs.collection(CHECKPOINTS).updateOne({ _id: 'notes' }, { $set: { position: 20 } })
  await all
  const waited = Date.now() - started
  t.ok(waited < 2000, `all returned once the checkpoint moved (${waited} ms)`)
  t.ok(reads <= Math.ceil(waited / 20) + 2, `${reads} checkpoint reads for 64 waiting requests in ${waited} ms`)
  await sync.waitFor('notes', 15)
  t.ok(reads <= Math.ceil(waited / 20) + 3, 'a position already seen needs no read')
})
