// The watch over a projection's checkpoint (projections/readModelWatch.ts). On FerretDB a dropped
// database can swallow writes for a moment after the drop, so the checkpoint a rebuild has just
// written may vanish again before any check saw it: the watch used to need one sighting between
// two losses, and the projection then ran on for good with no checkpoint and /readyz not ready
// (the MongoDB case of readModels.runtimeLoss failed about one run in five).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { startWatchedProjection } from '../projections/readModelWatch.ts'
import { CHECKPOINTS, rebuildProjection, type Projection } from '../projections/runner.ts'
import { embeddedStores } from './support/embeddedStores.ts'
import { eventually } from './support/roleProcess.ts'

const counter: Projection = {
  name: 'counter',
  collections: ['counted'],
  async handle(events, docs) {
    for (const e of events) await docs.collection('counted').updateOne({ _id: e.id }, { $set: { at: e.globalPosition } }, { upsert: true })
  },
}

t.test('given a rebuilt read model, when its checkpoint is lost again before any check saw it, then the watch rebuilds it again', async (t) => {
  const { events, docs } = embeddedStores(t)
  for (let i = 0; i < 3; i++) await events.appendToStream(`s-${i}`, [{ id: randomUUID(), type: 'Counted', data: {} }])
  const watched = startWatchedProjection(counter, {
    events,
    docs,
    checkEveryMs: 300,
    rebuild: (p) => rebuildProjection(p, { events, docs }),
    onError: () => {},
  })
  t.teardown(() => watched.stop())
  const checkpoint = () => docs.collection(CHECKPOINTS).findOne({ _id: 'counter' })
  // Given: the start found no checkpoint and rebuilt, and the loop runs.
  await eventually('the first rebuild', async () => watched.rebuilds() === 1 && watched.status().state === 'running' && (await checkpoint()) !== null, 30_000, 5)

  // When: lost once, seen lost and rebuilt; then lost again the moment the loop is back.
  await docs.collection(CHECKPOINTS).deleteOne({ _id: 'counter' })
  await eventually('the rebuild after the loss', async () => watched.rebuilds() === 2 && watched.status().state === 'running' && (await checkpoint()) !== null, 30_000, 2)
  await docs.collection(CHECKPOINTS).deleteOne({ _id: 'counter' })

  // Then: rebuilt once more, checkpoint back, nothing lost.
  await eventually('a rebuild after the second loss', async () => watched.rebuilds() === 3 && (await checkpoint()) !== null, 30_000)
  await events.appendToStream('s-late', [{ id: randomUUID(), type: 'Counted', data: {} }])
  await eventually('every event counted', async () => (await docs.collection('counted').countDocuments({})) === 4, 30_000)
})

t.test('given a lost read model, when its rebuild fails once, then the watch rebuilds it again in bulk instead of replaying the log from position 0 in the loop', async (t) => {
  const { events, docs } = embeddedStores(t)
  for (let i = 0; i < 3; i++) await events.appendToStream(`s-${i}`, [{ id: randomUUID(), type: 'Counted', data: {} }])
  let failNext = false
  const logs: string[] = []
  const watched = startWatchedProjection(counter, {
    events,
    docs,
    checkEveryMs: 100,
    rebuild: async (p) => {
      if (failNext) throw ((failNext = false), new Error('the store went away mid-rebuild'))
      return rebuildProjection(p, { events, docs })
    },
    onError: () => {},
    log: (m) => logs.push(m),
  })
  t.teardown(() => watched.stop())
  const checkpoint = () => docs.collection(CHECKPOINTS).findOne({ _id: 'counter' })
  await eventually('the first rebuild', async () => watched.rebuilds() === 1 && watched.status().state === 'running' && (await checkpoint()) !== null, 30_000, 5)

  // When: lost, and the first rebuild after the loss fails.
  failNext = true
  await docs.collection(CHECKPOINTS).deleteOne({ _id: 'counter' })
  await docs.collection('counted').drop()

  // Then: a second rebuild after the failure, the loop running, every event there.
  await eventually('a rebuild after the failed one', async () => watched.rebuilds() === 2 && watched.status().state === 'running' && (await checkpoint()) !== null, 30_000)
  t.ok(logs.some((l) => l.includes('rebuild failed') && l.includes('the store went away mid-rebuild')), 'the failure is logged with its cause')
  t.equal(await docs.collection('counted').countDocuments({}), 3)
})

t.test('given a rebuild that keeps failing, then it is tried again with growing pauses, not at every check, and the failure is logged once', async (t) => {
  const { events, docs } = embeddedStores(t)
  await events.appendToStream('s-0', [{ id: randomUUID(), type: 'Counted', data: {} }])
  let attempts = 0
  const logs: string[] = []
  const watched = startWatchedProjection(counter, {
    events,
    docs,
    checkEveryMs: 20,
    rebuild: async () => {
      attempts++
      throw new Error('a handler that throws')
    },
    onError: () => {},
    log: (m) => logs.push(m),
  })
  t.teardown(() => watched.stop())
  await eventually('a retry after the first failure', async () => attempts >= 2, 30_000)
  const since = Date.now()
  const before = attempts
  await eventually('two seconds to pass', async () => Date.now() - since >= 2000, 30_000)
  // Checked every 20 ms, with no pause that would be about 100 attempts in these two seconds;
  // with pauses doubling from 20 ms, at most 7 (a busy machine makes fewer, never more).
  t.ok(attempts - before <= 7, `${attempts - before} attempts in 2 s`)
  t.equal(watched.status().state, 'rebuilding')
  t.equal(watched.status().lastError, 'a handler that throws')
  t.ok(watched.status().retries >= 2, `its failed tries counted (${watched.status().retries})`)
  t.equal(logs.filter((l) => l.includes('rebuild failed')).length, 1, 'logged once for one cause')
})
