// EventStoreDB depth (issue 13, finding 6), NotLeader: in a cluster, a node that does not lead
// (after an election moved the leader) refuses Streams calls with NotLeader naming the leader.
// The client re-points its connection there; the adapter makes the refused call once more, so
// a command or a read does not fail (a 500) on the first call after an election, and a
// projection connected through a follower runs on the leader. Two protocol-level test servers
// play the old and the new leader.
import t from 'tap'
import { join } from 'node:path'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { startProjection } from '../projections/runner.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { tempDir } from './support/tmp.ts'
import { seenProjection, ticked } from './support/ticks.ts'


t.test('given a node that answers NotLeader, when calls are made through it, then they land on the leader it names without failing', async (t) => {
  const leader = await startEsdbTestServer()
  const follower = await startEsdbTestServer()
  follower.redirect({ host: '127.0.0.1', port: leader.port })
  const onLeader = openEsdbEventStore(leader.connectionString)
  const store = openEsdbEventStore(follower.connectionString)
  t.teardown(async () => (await store.close(), await onLeader.close(), await follower.stop(), await leader.stop()))

  const appended = await store.appendToStream('tick-1', [ticked(1)])
  t.equal(appended.nextExpectedRevision, 0, 'the first append after NotLeader succeeds')
  t.equal((await onLeader.readStream('tick-1')).events.length, 1, 'on the leader')
  t.equal((await store.readStream('tick-1')).events.length, 1, 'reads follow')

  // The leader moves again while the store is connected.
  const next = await startEsdbTestServer()
  t.teardown(() => next.stop())
  leader.redirect({ host: '127.0.0.1', port: next.port })
  const onNext = openEsdbEventStore(next.connectionString)
  t.teardown(() => onNext.close())
  const read = await store.readStream('tick-1')
  t.same(read, { events: [], currentRevision: -1, streamExists: false }, 'a read after the second election is answered by the new leader')
  await store.appendToStream('tick-2', [ticked(2)])
  t.equal((await onNext.readStream('tick-2')).events.length, 1, 'and so is an append')
})

t.test('given a projection connected through a follower, then it follows the leader', async (t) => {
  const leader = await startEsdbTestServer()
  const follower = await startEsdbTestServer()
  follower.redirect({ host: '127.0.0.1', port: leader.port })
  const writer = openEsdbEventStore(leader.connectionString)
  const events = openEsdbEventStore(follower.connectionString)
  const tmp = tempDir()
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'rm.db') })
  const errors: unknown[] = []
  const p = startProjection(seenProjection, { events, docs, onError: (e) => errors.push(e), backoff: { initialMs: 20, maxMs: 100 } })
  t.teardown(async () => {
    await p.stop()
    await events.close()
    await writer.close()
    await follower.stop()
    await leader.stop()
    await docs.close()
    tmp.remove()
  })
  await writer.appendToStream('tick-1', [ticked(1), ticked(2)])
  const { lastGlobalPosition } = await writer.appendToStream('tick-2', [ticked(3)])
  await p.waitFor(lastGlobalPosition, 10_000)
  t.equal(await docs.collection('seen').countDocuments({}), 3)
  t.equal(p.status().state, 'running')
  t.same(errors, [], 'no failure on the way')
})
