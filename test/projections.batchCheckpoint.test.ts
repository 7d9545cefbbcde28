// A projection batch written through `writeGuarded` (projections/batchedDocuments.ts) counts as a
// batch that wrote: its checkpoint goes in the same write batch, at once, not after the idle lag
// (CHECKPOINT_LAG_MS). Another process (an API scaled apart) waits on that checkpoint for
// read-your-writes, so a late checkpoint is a late read.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { CHECKPOINTS, startProjection, type Projection } from '../projections/runner.ts'
import { embeddedStores } from './support/embeddedStores.ts'

t.test('given a projection that writes only through writeGuarded, when it applies a batch, then its checkpoint is saved with the batch', async (t) => {
  const { events, docs } = embeddedStores(t)
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

// CHECKPOINT_IDLE_MS: how late the checkpoint of batches that wrote nothing may be saved. A
// deployment whose read-model store counts every write (FerretDB scans per update) may save less
// often; what is not saved is re-applied after a crash and changes nothing, and stop saves it.
t.test('given CHECKPOINT_IDLE_MS of a minute, when a projection applies events it ignores, then the checkpoint waits for the minute or the stop', async (t) => {
  const { events, docs } = embeddedStores(t)
  const projection: Projection = { name: 'idle', collections: [], async handle() {} }
  const running = startProjection(projection, { events, docs, onError: () => {}, checkpointIdleMs: 60_000 })
  const stored = async () => (await docs.collection<{ _id: string; position: number }>(CHECKPOINTS).findOne({ _id: 'idle' }))?.position
  await running.waitFor(-1, 10_000)
  const before = await stored()
  let last = -1
  for (let i = 0; i < 5; i++) last = (await events.appendToStream(`idle-${randomUUID()}`, [{ id: randomUUID(), type: 'Ignored', data: {} }])).lastGlobalPosition
  await running.waitFor(last, 10_000)
  t.equal(running.position(), last, 'applied')
  t.equal(await stored(), before, 'not saved within the minute')
  await running.stop()
  t.equal(await stored(), last, 'saved on stop')
})
