// EventStoreDB depth (issue 13, finding 6), reconnects: once the store is back, a call on the
// same store object succeeds, even while the client's connection is still waiting out its
// reconnect backoff from the outage (gRPC answers UNAVAILABLE at once then, without trying).
// While the store stays down, an append is tried until its deadline and a read fails at once,
// both as EventStoreUnreachableError (unavailable: 503 with Retry-After at the edge, a retry in a
// supervised loop), never as a raw gRPC error (a 500). Against the protocol-level test server,
// which crashes and restarts on the same port.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { EventStoreTimeoutError, EventStoreUnreachableError } from '../ports/eventStore.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'

const DEADLINE_MS = 3000

t.test('given a store that went down and a call that failed meanwhile, when the store is back, then the next calls succeed at once', async (t) => {
  const server = await startEsdbTestServer()
  const events = openEsdbEventStore(`${server.connectionString}&defaultDeadline=${DEADLINE_MS}`)
  t.teardown(async () => {
    await events.close()
    await server.stop()
  })
  await events.appendToStream('tick-0', [{ id: randomUUID(), type: 'Ticked', data: { n: 0 } }])

  await server.crash()
  const started = Date.now()
  const down = await events.appendToStream('tick-0', [{ id: randomUUID(), type: 'Ticked', data: { n: 1 } }]).then(
    () => null,
    (error: unknown) => error,
  )
  t.ok(down instanceof EventStoreUnreachableError, `an append while the store is down fails as unreachable, not with a raw gRPC error: ${String(down)}`)
  t.ok(down instanceof EventStoreTimeoutError, 'which every caller handles as unavailable (503, a supervised retry)')
  t.ok(Date.now() - started >= DEADLINE_MS, 'after trying until its deadline')
  const readStarted = Date.now()
  const readDown = await events.readStream('tick-0').then(
    () => null,
    (error: unknown) => error,
  )
  t.ok(readDown instanceof EventStoreUnreachableError, `a read while the store is down fails as unreachable: ${String(readDown)}`)
  t.ok(Date.now() - readStarted < DEADLINE_MS, 'at once: a read is not made again, its caller backs off')

  await server.restart()
  // The client's connection now waits out its reconnect backoff: calls made in it must still succeed.
  const id = randomUUID()
  const appended = await events.appendToStream('tick-0', [{ id, type: 'Ticked', data: { n: 2 } }])
  t.equal(appended.nextExpectedRevision, 1)
  const read = await events.readStream('tick-0')
  t.same(
    read.events.map((e) => e.data.n),
    [0, 2],
    'the stream holds what was appended before and after, and not the refused append',
  )
})
