// Supervised projections (issue 13, finding 1): a projection whose event store goes away logs it,
// retries with backoff, reconnects and resumes with no event skipped; one started before its
// event store listens catches up once it appears; one that cannot recover gives up (the service
// then exits non-zero). Against the protocol-level EventStoreDB test server with the real client.
import t from 'tap'
import { freePort } from './support/ports.ts'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { startProjection, type LoopState, type RunningProjection } from '../projections/runner.ts'
import type { EventStore } from '../ports/eventStore.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { tempDir } from './support/tmp.ts'
import { seenProjection } from './support/ticks.ts'

const appendTicks = async (store: EventStore, from: number, count: number): Promise<string[]> => {
  const ids: string[] = []
  for (let n = from; n < from + count; n++) {
    const id = randomUUID()
    await store.appendToStream(`tick-${n % 3}`, [{ id, type: 'Ticked', data: { n } }])
    ids.push(id)
  }
  return ids
}

async function until(what: string, check: () => boolean | Promise<boolean>, deadlineMs = 20_000): Promise<void> {
  const deadline = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const fast = { backoff: { initialMs: 50, maxMs: 300 } }

function watchStates(p: RunningProjection): Set<LoopState> {
  const states = new Set<LoopState>()
  const timer = setInterval(() => p.status && states.add(p.status().state), 5)
  void p.done.finally(() => clearInterval(timer))
  return states
}

t.test('given a running projection, when the event store stops mid-subscription and comes back, then it resumes with no event skipped', async (t) => {
  const server = await startEsdbTestServer()
  const events = openEsdbEventStore(server.connectionString)
  const tmp = tempDir()
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'rm.db') })
  const errors: string[] = []
  const p = startProjection(seenProjection, { events, docs, onError: (err) => errors.push(String(err)), ...fast })
  const states = watchStates(p)
  t.teardown(async () => {
    await p.stop()
    await events.close()
    await server.stop()
    await docs.close()
    tmp.remove()
  })
  const before = await appendTicks(events, 0, 30)
  await until('the first 30 events', async () => (await docs.collection('seen').countDocuments({})) === 30)

  await server.crash()
  await until('the failure to be noticed', () => errors.length > 0, 5000).catch(() => {})
  t.ok(errors.length > 0, 'the failure is logged')
  await server.restart()
  const after = await appendTicks(events, 30, 30)
  await until('all 60 events', async () => (await docs.collection('seen').countDocuments({})) === 60)
  const ids = (await docs.collection<{ _id: string }>('seen').find({})).map((d) => d._id).sort()
  t.same(ids, [...before, ...after].sort(), 'every event applied, none skipped')
  t.equal(p.status().state, 'running')
  t.equal(p.status().retries, 0, 'healthy again')
  t.ok(states.has('retrying'), 'reported retrying while the store was down')
})

t.test('given projections started before the event store listens, when it appears, then they catch up', async (t) => {
  const port = await freePort()
  const events = openEsdbEventStore(`esdb://127.0.0.1:${port}?tls=false`)
  const tmp = tempDir()
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'rm.db') })
  const p = startProjection(seenProjection, { events, docs, onError: () => {}, ...fast })
  let server: Awaited<ReturnType<typeof startEsdbTestServer>> | undefined
  t.teardown(async () => {
    await p.stop()
    await events.close()
    await server?.stop()
    await docs.close()
    tmp.remove()
  })
  await until('the projection to notice the store is not there', () => p.status?.().state === 'retrying' && p.status().retries >= 2, 3000).catch(() => {})
  server = await startEsdbTestServer({ port })
  const writer = openEsdbEventStore(server.connectionString)
  t.teardown(() => writer.close())
  const first = await appendTicks(writer, 0, 20)
  const { lastGlobalPosition } = await writer.appendToStream('tick-x', [{ id: randomUUID(), type: 'Ticked', data: { n: 20 } }])
  await p.waitFor(lastGlobalPosition, 30_000)
  t.equal(await docs.collection('seen').countDocuments({}), 21)
  t.ok((await docs.collection('seen').find({})).every((d) => d._id !== undefined) && first.length === 20)
  t.equal(p.status().state, 'running')
})

t.test('given an event store that never appears, when the give-up time passes, then the loop reports failed and gives up', async (t) => {
  const port = await freePort()
  const events = openEsdbEventStore(`esdb://127.0.0.1:${port}?tls=false`)
  const tmp = tempDir()
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'rm.db') })
  let gaveUp: unknown = null
  const p = startProjection(seenProjection, { events, docs, onError: () => {}, giveUpMs: 500, onGiveUp: (err) => (gaveUp = err), ...fast })
  t.teardown(async () => {
    await p.stop()
    await events.close()
    await docs.close()
    tmp.remove()
  })
  await p.done
  t.ok(gaveUp, 'onGiveUp called (the service exits non-zero there)')
  t.equal(p.status().state, 'failed')
  t.match(p.status().lastError, /./)
})
