// EventStoreDB depth (issue 13, finding 6), checkpointReached: a filtered projection stores the
// positions the server reports as scanned, so after a restart it resumes near the head of the log
// instead of rescanning everything after the last event it follows. The client reports a
// checkpoint when it arrives, ahead of events still buffered; the adapter holds it until those
// have been taken, so a stored checkpoint never skips an event (checked with events that follow
// the checkpoint closely). Against the protocol-level test server, which counts the events it
// scans for reads and subscriptions.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { readCheckpoint, startProjection, type Projection } from '../projections/runner.ts'
import type { EventStore, GlobalPosition, RecordedEvent } from '../ports/eventStore.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { tempDir } from './support/tmp.ts'

const OTHER_EVENTS = 3000

const ticks: Projection = {
  name: 'ticks',
  filter: { categories: ['tick'] },
  collections: ['ticks'],
  async handle(events, docs) {
    for (const e of events) await docs.collection('ticks').updateOne({ _id: e.id }, { $set: { n: e.data.n } }, { upsert: true })
  },
}

const event = (type: string, n: number) => ({ id: randomUUID(), type, data: { n } })

async function appendOthers(store: EventStore, count: number): Promise<GlobalPosition> {
  let last = 0
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, (_, k) => event('Other', i + k))
    last = (await store.appendToStream(`other-${i / 100}`, batch)).lastGlobalPosition
  }
  return last
}

async function until(what: string, check: () => boolean | Promise<boolean>, deadlineMs = 20_000): Promise<void> {
  const deadline = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

t.test('given a filtered projection over a log of mostly other events, when it restarts, then it resumes near the head, not from its last event', async (t) => {
  const server = await startEsdbTestServer()
  const events = openEsdbEventStore(server.connectionString)
  const tmp = tempDir()
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'rm.db') })
  t.teardown(async () => (await events.close(), await server.stop(), await docs.close(), tmp.remove()))

  for (let n = 0; n < 5; n++) await events.appendToStream('tick-1', [event('Ticked', n)])
  const lastTick = (await events.readStream('tick-1')).events.at(-1)!.globalPosition
  const head = await appendOthers(events, OTHER_EVENTS)

  const first = startProjection(ticks, { events, docs, onError: () => {} })
  await until('5 ticks', async () => (await docs.collection('ticks').countDocuments({})) === 5)
  // The stored checkpoint follows the server's checkpoints through the other events.
  await until('the checkpoint to pass the other events', async () => (await readCheckpoint(docs, 'ticks')) > head - 40 * 200)
  await first.stop()
  const stored = await readCheckpoint(docs, 'ticks')
  t.ok(stored > lastTick, `checkpoint ${stored} is past the last tick (${lastTick}), near the head (${head})`)

  const before = server.eventsScanned()
  const again = startProjection(ticks, { events, docs, onError: () => {} })
  t.teardown(() => again.stop())
  const { lastGlobalPosition } = await events.appendToStream('tick-1', [event('Ticked', 5)])
  await again.waitFor(lastGlobalPosition, 10_000)
  const scanned = server.eventsScanned() - before
  t.equal(await docs.collection('ticks').countDocuments({}), 6, 'the new tick is applied')
  t.ok(scanned < 200, `after the restart the server scanned ${scanned} events (the log holds ${OTHER_EVENTS} other events after the last tick)`)
})

t.test('given checkpoints interleaved with followed events, when a consumer stores each reported checkpoint, then no event lies at or before a checkpoint reported ahead of it', async (t) => {
  const server = await startEsdbTestServer()
  const events = openEsdbEventStore(server.connectionString)
  t.teardown(async () => (await events.close(), await server.stop()))
  // One tick every 7 other events: the server's checkpoints (every 32 scanned) fall between ticks
  // that are still buffered on the client when the checkpoint arrives.
  for (let n = 0; n < 400; n++) await events.appendToStream(n % 8 === 0 ? 'tick-1' : `other-${n}`, [event(n % 8 === 0 ? 'Ticked' : 'Other', n)])
  const all = (await events.readAll({ filter: { categories: ['tick'] } })).length
  const ac = new AbortController()
  const seen: RecordedEvent[] = []
  const reported: { at: GlobalPosition; afterEvents: number }[] = []
  const stream = events.subscribeToAll({ filter: { categories: ['tick'] }, signal: ac.signal, batchSize: 4, onCheckpoint: (at) => reported.push({ at, afterEvents: seen.length }) })
  for await (const e of stream) {
    seen.push(e)
    // A slow consumer, so events pile up in the client's buffer behind the checkpoints.
    await new Promise((r) => setTimeout(r, 2))
    if (seen.length === all) break
  }
  ac.abort()
  t.ok(reported.length >= 5, `${reported.length} checkpoints reported`)
  for (const { at, afterEvents } of reported) {
    const late = seen.slice(afterEvents).find((e) => e.globalPosition <= at)
    if (late) t.fail(`checkpoint ${at} was reported before event ${late.globalPosition}`)
    const behind = seen.slice(0, afterEvents).find((e) => e.globalPosition > at)
    if (behind) t.fail(`checkpoint ${at} was reported after event ${behind.globalPosition}, which lies beyond it`)
  }
  t.pass('every checkpoint reported in step with the events')
})
