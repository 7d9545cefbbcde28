// A projection batch written through `writeGuarded` (projections/batchedDocuments.ts) counts as a
// batch that wrote: its checkpoint goes in the same write batch, at once, not after the idle lag
// (CHECKPOINT_LAG_MS). Another process (an API scaled apart) waits on that checkpoint for
// read-your-writes, so a late checkpoint is a late read.
import t from 'tap'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { CHECKPOINTS, startProjection, type Projection } from '../projections/runner.ts'
import { tempDir } from './support/tmp.ts'

t.test('given a projection that writes only through writeGuarded, when it applies a batch, then its checkpoint is saved with the batch', async (t) => {
  const { dir, remove } = tempDir()
  const events = openSqliteEventStore({ path: join(dir, 'events.db') })
  const docs = openEmbeddedDocumentStore({ path: join(dir, 'docs.db') })
  t.teardown(async () => {
    await docs.close()
    await events.close()
    remove()
  })
  const projection: Projection = {
    name: 'guarded',
    collections: ['guarded'],
    async handle(batch, store) {
      await store.collection('guarded').writeGuarded(batch.map((e) => ({ insert: { _id: e.id, revision: 0 } })))
    },
  }
  const running = startProjection(projection, { events, docs, onError: () => {} })
  t.teardown(() => running.stop())
  const tick = async () => {
    const { lastGlobalPosition } = await events.appendToStream(`tick-${randomUUID()}`, [{ id: randomUUID(), type: 'Ticked', data: {} }])
    await running.waitFor(lastGlobalPosition, 10_000)
    return { lastGlobalPosition, checkpoint: await docs.collection(CHECKPOINTS).findOne({ _id: 'guarded' }) }
  }
  // The second batch comes right after the first: within the idle lag of the first checkpoint.
  for (const [i, { lastGlobalPosition, checkpoint }] of [await tick(), await tick()].entries())
    t.equal(checkpoint?.position, lastGlobalPosition, `batch ${i + 1}: the checkpoint is at the batch already, when the projection says it applied it`)
})
