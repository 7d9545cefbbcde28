// EventStoreDB depth (issue 13, finding 6), secure mode: EventStoreDB runs with TLS and
// authentication unless started `--insecure`. The adapter takes the connection string as
// EventStoreDB documents it (`esdb://user:password@host:port?tls=true&tlsCAFile=...`); with an
// admin user everything works, including the `$all` subscription every projection needs;
// without credentials (or with a user that is not an admin) the `$all` subscription is refused,
// and the refusal says what to change, in the error the projection loop logs. The test server
// speaks TLS with a certificate made for this run and checks the Basic credentials of each call.
import t from 'tap'
import { join } from 'node:path'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { startProjection } from '../projections/runner.ts'
import { EventStoreAccessDeniedError, type EventStore } from '../ports/eventStore.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { selfSignedCert } from './support/tlsCert.ts'
import { tempDir } from './support/tmp.ts'
import { seenProjection, ticked } from './support/ticks.ts'


async function firstOf(store: EventStore): Promise<unknown> {
  const ac = new AbortController()
  for await (const e of store.subscribeToAll({ signal: ac.signal })) return (ac.abort(), e)
  return undefined
}


t.test('EventStoreDB in secure mode (TLS and credentials)', async (t) => {
  const tmp = tempDir()
  const tls = selfSignedCert(tmp.dir)
  const server = await startEsdbTestServer({
    secure: { key: tls.key, cert: tls.cert, users: { admin: { password: 'changeit', admin: true }, reader: { password: 'secret' } } },
  })
  t.teardown(async () => (await server.stop(), tmp.remove()))
  const url = (credentials: string) => `esdb://${credentials}localhost:${server.port}?tls=true&tlsCAFile=${encodeURIComponent(tls.caFile)}&defaultDeadline=3000`
  const open = (credentials: string) => {
    const store = openEsdbEventStore(url(credentials))
    t.teardown(() => store.close())
    return store
  }

  t.test('given an admin user in the connection string, then appends, reads and the $all subscription work over TLS', async (t) => {
    const store = open('admin:changeit@')
    const { lastGlobalPosition } = await store.appendToStream('tick-1', [ticked(1), ticked(2)])
    t.equal((await store.readStream('tick-1')).events.length, 2)
    t.equal((await store.readAll({ filter: { categories: ['tick'] } })).length, 2)
    t.match(await firstOf(store), { streamName: 'tick-1' }, 'subscribeToAll delivers')

    const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'admin.db') })
    const p = startProjection(seenProjection, { events: store, docs, onError: () => {} })
    t.teardown(async () => (await p.stop(), await docs.close()))
    await p.waitFor(lastGlobalPosition, 10_000)
    t.equal(await docs.collection('seen').countDocuments({}), 2, 'a projection runs')
  })

  t.test('given no credentials, when a projection subscribes to $all, then it is refused with an error that says to add credentials, and the loop logs it', async (t) => {
    const store = open('')
    const err = await firstOf(store).catch((e: unknown) => e)
    t.ok(err instanceof EventStoreAccessDeniedError, String(err))
    t.match((err as Error).message, /subscribeToAll.*no credentials.*esdb:\/\/user:password@/)
    t.ok((await store.appendToStream('tick-1', [ticked(3)]).catch((e: unknown) => e)) instanceof EventStoreAccessDeniedError, 'appends too (anonymous stream access is off)')

    const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'anonymous.db') })
    const logged: unknown[] = []
    const p = startProjection(seenProjection, { events: store, docs, onError: (e) => logged.push(e), backoff: { initialMs: 20, maxMs: 50 } })
    t.teardown(async () => (await p.stop(), await docs.close()))
    const deadline = Date.now() + 10_000
    while (logged.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    t.ok(logged[0] instanceof EventStoreAccessDeniedError, 'the projection loop logs the refusal')
    t.equal(p.status().state, 'retrying')
    t.match(p.status().lastError, /no credentials/, '/readyz shows why')
  })

  t.test('given a user who is not an admin, then it may append but not subscribe to $all', async (t) => {
    const store = open('reader:secret@')
    await store.appendToStream('tick-2', [ticked(1)])
    const err = await firstOf(store).catch((e: unknown) => e)
    t.ok(err instanceof EventStoreAccessDeniedError)
    t.match((err as Error).message, /needs an admin user/)
  })

  t.test('given a wrong password, then every call is refused', async (t) => {
    const store = open('admin:wrong@')
    const err = await store.readStream('tick-1').catch((e: unknown) => e)
    t.ok(err instanceof EventStoreAccessDeniedError, String(err))
    t.match((err as Error).message, /Bad credentials; the user or password in the connection string is wrong/)
  })
})
