// A store call that never answers (a connection lost mid-request while FerretDB restarted, in the
// fault suite) held a projection's loop for good: `running`, no error, its read model frozen
// while the log grew. Now a batch that has not finished within the batch timeout fails, and the
// loop retries it from its checkpoint.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { startProjection, type Projection } from '../projections/runner.ts'
import { embeddedStores } from './support/embeddedStores.ts'
import type { DocumentStore } from '../ports/documentStore.ts'

t.test('given a batch whose store call never answers, when the batch timeout passes, then the loop retries it and applies every event', async (t) => {
  const { events, docs: embedded } = embeddedStores(t)
  // Batches without a transaction, as on MongoDB without a replica set (FerretDB): a hung batch
  // holds no lock the retry would wait for.
  const docs: DocumentStore = Object.assign(Object.create(embedded) as DocumentStore, { writeBatch: <R>(fn: (b: DocumentStore) => Promise<R>) => fn(docs) })
  for (let i = 0; i < 5; i++) await events.appendToStream(`thing-${i}`, [{ id: randomUUID(), type: 'ThingHappened', data: { i } }])
  let hung = 0
  const seen: number[] = []
  const projection: Projection = {
    name: 'hanging-once',
    collections: ['things'],
    async handle(batch, store) {
      // The first attempt waits on a call that never comes back.
      if (hung++ === 0) await new Promise(() => {})
      for (const e of batch) await store.collection<{ _id: string; at: number }>('things').replaceOne({ _id: e.id }, { _id: e.id, at: e.globalPosition }, { upsert: true })
      seen.push(...batch.map((e) => e.globalPosition))
    },
  }
  const errors: string[] = []
  const p = startProjection(projection, { events, docs, batchTimeoutMs: 300, backoff: { initialMs: 10, maxMs: 50 }, onError: (err) => errors.push((err as Error).message) })
  t.teardown(() => p.stop())
  const head = (await events.readAll()).at(-1)!.globalPosition
  await p.waitFor(head, 30_000)
  t.equal(await docs.collection('things').countDocuments({}), 5, 'every event applied')
  t.match(errors, [/did not finish within 300 ms/], 'the hung batch is reported')
  t.equal(p.status().state, 'running')
})
