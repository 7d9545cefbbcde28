// The EventStoreDB adapter against the conformance suite: always on the protocol-level test server
// (both append paths of the client), and on a real EventStoreDB when ESDB_URL is set. A real
// server that is configured but down fails the run; it is never skipped.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import type { EventStore } from '../ports/eventStore.ts'
import { eventStoreConformance, type EventStoreFactory } from './conformance/eventStore.suite.ts'
import { startEsdbTestServer, type EsdbTestServerOptions } from './support/esdbTestServer.ts'
import { pollUntil } from './support/pollUntil.ts'

const onTestServer =
  (options?: EsdbTestServerOptions): EventStoreFactory =>
  async () => {
    const server = await startEsdbTestServer(options)
    const store = openEsdbEventStore(server.connectionString)
    return {
      store,
      cleanup: async () => {
        await store.close()
        await server.stop()
      },
    }
  }

eventStoreConformance(t, 'esdb (protocol test server)', onTestServer())
// Servers without feature discovery (20.10) make the client use Append instead of BatchAppend.
eventStoreConformance(t, 'esdb (protocol test server, Append RPC)', onTestServer({ serverFeatures: false }))

const esdbUrl = process.env.ESDB_URL
if (esdbUrl) {
  eventStoreConformance(t, `esdb (${esdbUrl})`, async () => {
    const store = openEsdbEventStore(esdbUrl)
    await reachable(store, esdbUrl)
    return { store, cleanup: () => store.close() }
  })
}

async function reachable(store: EventStore, url: string): Promise<void> {
  try {
    await store.readStream(`probe-${randomUUID()}`)
  } catch (error) {
    await store.close()
    throw new Error(`ESDB_URL=${url} is set but EventStoreDB does not answer: ${String(error)}`, { cause: error })
  }
}

t.test('esdb adapter on the protocol test server', async (t) => {
  const server = await startEsdbTestServer({ statsIntervalMs: 10 })
  const store = openEsdbEventStore(server.connectionString)
  t.teardown(async () => {
    await store.close()
    await server.stop()
  })
  const stream = `esdbcheck${randomUUID().slice(0, 8)}-1`
  await store.appendToStream(stream, [{ id: randomUUID(), type: 'Checked', data: {} }])
  await new Promise((resolve) => setTimeout(resolve, 30))

  t.test('system events of the server never reach the port', async (t) => {
    const all = await store.readAll()
    t.ok(all.some((e) => e.streamName === stream))
    t.same(all.filter((e) => e.streamName.startsWith('$') || e.type.startsWith('$')), [])
  })

  t.test('close ends a live subscription', async (t) => {
    const other = openEsdbEventStore(server.connectionString)
    const seen: string[] = []
    const consumed = (async () => {
      for await (const event of other.subscribeToAll()) seen.push(event.streamName)
    })()
    await pollUntil('the subscription delivers the stored event', () => seen.length > 0, 30_000, 10)
    await other.close()
    await consumed
    t.same(seen, [stream], 'nothing else came, and the loop ended with the close')
  })
})
