// EventStoreDB depth (issue 13, finding 6), deadlines: every call to the store has one (the
// connection string's `defaultDeadline`, else 10 s). A store that accepts the connection but
// never answers gives EventStoreTimeoutError, never a hang; once it answers again the same store
// object works (the wedged connection is replaced), and a supervised projection retries through
// the hang and catches up. Against the protocol-level test server in its "hang" mode.
import t from 'tap'
import { join } from 'node:path'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { startProjection } from '../projections/runner.ts'
import { EventStoreTimeoutError, type EventStore } from '../ports/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import type { Decider } from '../domain/decider.ts'
import { DomainError } from '../domain/errors.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { tempDir } from './support/tmp.ts'
import { seenProjection, ticked } from './support/ticks.ts'

const DEADLINE_MS = 300

/** Settles with how long the call took and what it gave; fails the test if it takes 10 × the deadline (a hang). */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; error?: unknown; value?: T }> {
  const started = Date.now()
  const hang = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the call hung')), 10 * DEADLINE_MS).unref())
  try {
    const value = await Promise.race([call(), hang])
    return { ms: Date.now() - started, value }
  } catch (error) {
    return { ms: Date.now() - started, error }
  }
}

const ticker: Decider<{ n: number }, { type: 'Ticked'; data: { n: number } }, number> = {
  decide: (c) => [{ type: 'Ticked', data: { n: c.n } }],
  evolve: (s) => s + 1,
  initialState: () => 0,
}

async function firstOf(store: EventStore): Promise<unknown> {
  for await (const e of store.subscribeToAll({})) return e
  return undefined
}

const calls: [string, (store: EventStore) => Promise<unknown>][] = [
  ['appendToStream', (store) => store.appendToStream('tick-1', [ticked(1)])],
  ['readStream', (store) => store.readStream('tick-1')],
  ['readAll', (store) => store.readAll({ maxCount: 10 })],
  ['subscribeToAll', (store) => firstOf(store)],
]

t.test('given a store that accepts connections but never answers, when any call is made, then it fails with a timeout at its deadline, and works again once the store answers', async (t) => {
  const server = await startEsdbTestServer()
  const store = openEsdbEventStore(`${server.connectionString}&defaultDeadline=${DEADLINE_MS}`)
  t.teardown(async () => (await store.close(), await server.stop()))

  // Hung from the first call on (the client's server-features call hangs too), then hung on a
  // connection already in use.
  for (const when of ['before the first call', 'on a connection in use']) {
    server.hang(true)
    for (const [name, call] of calls) {
      const r = await timed(() => call(store))
      t.ok(r.error instanceof EventStoreTimeoutError, `${when}: ${name} fails with EventStoreTimeoutError (${String(r.error)})`)
      t.ok(r.ms >= DEADLINE_MS - 20 && r.ms < 5 * DEADLINE_MS, `${when}: ${name} gave up after ${r.ms} ms`)
    }
    const handled = await timed(() => new CommandHandler(store).handle('tick-1', { n: 3 }, ticker))
    t.ok(handled.error instanceof DomainError && handled.error.code === 'service_unavailable', `${when}: a command answers 503 service_unavailable`)
    server.hang(false)
    const append = await timed(() => store.appendToStream('tick-1', [ticked(2)]))
    t.notOk(append.error, `${when}: answered again, the same store appends (${String(append.error ?? '')})`)
    t.ok((await store.readStream('tick-1')).events.length >= 1, 'and reads')
  }
})

t.test('given a projection started while the store hangs, when the store answers again, then the loop has logged timeouts, retried, and catches up', async (t) => {
  const server = await startEsdbTestServer()
  const writer = openEsdbEventStore(server.connectionString)
  await writer.appendToStream('tick-1', [ticked(1), ticked(2)])
  server.hang(true)
  const events = openEsdbEventStore(`${server.connectionString}&defaultDeadline=${DEADLINE_MS}`)
  const tmp = tempDir()
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'rm.db') })
  const errors: unknown[] = []
  const p = startProjection(seenProjection, { events, docs, onError: (err) => errors.push(err), backoff: { initialMs: 50, maxMs: 200 } })
  t.teardown(async () => {
    await p.stop()
    await events.close()
    await writer.close()
    await server.stop()
    await docs.close()
    tmp.remove()
  })
  const deadline = Date.now() + 10_000
  while (errors.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  t.ok(errors.length >= 2 && errors.every((e) => e instanceof EventStoreTimeoutError), `the loop logged ${errors.length} timeouts and kept retrying`)
  t.equal(p.status().state, 'retrying')
  t.match(p.status().lastError, /did not answer/)

  server.hang(false)
  const { lastGlobalPosition } = await writer.appendToStream('tick-2', [ticked(3)])
  await p.waitFor(lastGlobalPosition, 10_000)
  t.equal(await docs.collection('seen').countDocuments({}), 3, 'every event applied after the hang')
  t.equal(p.status().state, 'running')
})

t.test('given a live subscription, when another call on the same store times out, then the subscription goes on (the replaced connection is not cut)', async (t) => {
  const server = await startEsdbTestServer()
  const store = openEsdbEventStore(`${server.connectionString}&defaultDeadline=${DEADLINE_MS}`)
  const writer = openEsdbEventStore(server.connectionString)
  t.teardown(async () => (await store.close(), await writer.close(), await server.stop()))
  const ac = new AbortController()
  const got: number[] = []
  let failed: unknown = null
  const following = (async () => {
    for await (const e of store.subscribeToAll({ filter: { categories: ['tick'] }, signal: ac.signal })) got.push(e.data.n as number)
  })().catch((e: unknown) => (failed = e))
  await writer.appendToStream('tick-1', [ticked(1)])
  const until = async (n: number) => {
    const deadline = Date.now() + 5000
    while (got.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  }
  await until(1)
  server.hang(true)
  t.ok((await timed(() => store.readStream('tick-1'))).error instanceof EventStoreTimeoutError, 'a read times out')
  server.hang(false)
  await writer.appendToStream('tick-1', [ticked(2)])
  await until(2)
  t.same(got, [1, 2], 'the subscription delivered the event appended after the timeout')
  t.equal(failed, null)
  ac.abort()
  await following
})
