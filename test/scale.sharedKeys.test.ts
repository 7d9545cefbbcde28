// Roles on different hosts share only the stores (issue 31): two API processes with a data
// directory each, one EventStoreDB (the protocol-level test server) and one MongoDB database
// (FerretDB, which `npm test` starts). Before, the note content keys (DATA_DIR/keys.db) and the
// signing secrets (DATA_DIR/*-signing.key) lived in each process's data directory: a note sealed
// by one process could not be opened by the other, and upload URLs and dashboard tokens signed by
// one were refused by the other. Now both live in the key store in MongoDB (app/infrastructure.ts).
// MONGO_URL unset: nothing to run here; say so and pass.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { tempDir } from './support/tmp.ts'
import { startReplica, stopReplica, type Replica } from './support/apiReplicaProcess.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { pollUntil } from './support/pollUntil.ts'

const mongoUrl = process.env.MONGO_URL
/** `a` serves the API only and sets up an account with a dashboard person; `b` also runs the projections. No directory in common. */
async function twoHosts(t: Test, mongoUrl: string) {
  const esdb = await startEsdbTestServer()
  const db = `test_sharedkeys_${randomUUID().replace(/-/g, '').slice(0, 10)}`
  const dirA = tempDir()
  const dirB = tempDir()
  const email = `p-${randomUUID().slice(0, 8)}@example.com`
  const shared = { ESDB_URL: esdb.connectionString, MONGO_URL: mongoUrl, MONGO_DB: db, KEYS_MONGO_DB: `${db}_keys` }
  // Stopped at teardown even when the other one failed to start (before, the second crashed at start).
  const started: Replica[] = []
  t.teardown(async () => {
    await Promise.all(started.map(stopReplica))
    const { dropMongoDatabase } = await import('../adapters/mongodb/documentStore.ts')
    await dropMongoDatabase(mongoUrl, db)
    await dropMongoDatabase(mongoUrl, `${db}_keys`)
    await esdb.stop()
    dirA.remove()
    dirB.remove()
  })
  const b = await startReplica({ ...shared, DATA_DIR: dirB.dir, ROLES: 'api,projections' })
  started.push(b)
  const a = await startReplica({ ...shared, DATA_DIR: dirA.dir, ROLES: 'api', SETUP: '1', SETUP_PERSON: email })
  started.push(a)
  return { a, b, email, apiKey: a.apiKey! }
}

const url = (r: Replica, path: string) => `http://127.0.0.1:${r.port}${path}`
const json = (apiKey: string) => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' })

if (!mongoUrl) {
  t.comment('MONGO_URL is not set: the shared-key tests need MongoDB (npm test starts FerretDB)')
} else {
  t.test('given two processes that share only the stores, then each opens what the other sealed and accepts what the other signed', async (t) => {
    const { a, b, email, apiKey } = await twoHosts(t, mongoUrl)

    // The account `a` set up reaches `b` through the log and `b`'s projections.
    await pollUntil('the API key works on b', async () => (await fetch(url(b, '/v1/notes?limit=1'), { headers: json(apiKey) })).status === 200, 30_000)

    // A note created on `a` is sealed under a key `a` made; `b`'s projection must open it to list it.
    const created = await fetch(url(a, '/v1/notes'), { method: 'POST', headers: json(apiKey), body: JSON.stringify({ filename: 'a.mp3', contentType: 'audio/mpeg', title: 'Sealed on a' }) })
    t.equal(created.status, 202, 'a creates a note')
    const { noteId, upload } = (await created.json()) as { noteId: string; upload: { url: string; method: string; headers: Record<string, string> } }
    const onB = await pollUntil(
      "b's projection opens a's note",
      async () => {
        const r = await fetch(url(b, `/v1/notes/${noteId}`), { headers: json(apiKey) })
        return r.status === 200 ? ((await r.json()) as { title: string }) : null
      },
      30_000,
    )
    t.equal(onB.title, 'Sealed on a', 'the title b reads is the one a sealed')

    // Deciding on a note means opening its stream: b renames a's note, a renames one b created.
    const renamedOnB = await fetch(url(b, `/v1/notes/${noteId}`), { method: 'PATCH', headers: json(apiKey), body: JSON.stringify({ title: 'Renamed on b' }) })
    t.equal(renamedOnB.status, 200, "b decides on a's sealed stream")
    const fromB = await fetch(url(b, '/v1/notes'), { method: 'POST', headers: json(apiKey), body: JSON.stringify({ filename: 'b.mp3', contentType: 'audio/mpeg', title: 'Sealed on b' }) })
    const { noteId: bNote } = (await fromB.json()) as { noteId: string }
    const renamedOnA = await fetch(url(a, `/v1/notes/${bNote}`), { method: 'PATCH', headers: json(apiKey), body: JSON.stringify({ title: 'Renamed on a' }) })
    t.equal(renamedOnA.status, 200, "a opens and decides on the note b sealed (its stream's events under b's key)")
    const listed = await pollUntil(
      'both renames are projected',
      async () => {
        const r = (await (await fetch(url(a, '/v1/notes?limit=10'), { headers: json(apiKey) })).json()) as { notes: { title: string }[] }
        const titles = r.notes.map((n) => n.title).sort()
        return titles.join() === 'Renamed on a,Renamed on b' ? titles : null
      },
      30_000,
    )
    t.same(listed, ['Renamed on a', 'Renamed on b'])

    // The upload URL `a` signed is accepted by `b` (the local blob store checks its signature).
    const target = new URL(upload.url)
    const put = await fetch(url(b, target.pathname + target.search), { method: 'PUT', headers: upload.headers, body: new Uint8Array(64) })
    t.ok(put.status >= 200 && put.status < 300, `b accepts the upload URL a signed (${put.status})`)
    const forged = new URL(target)
    forged.searchParams.set('sig', 'x'.repeat(target.searchParams.get('sig')!.length))
    t.equal((await fetch(url(b, forged.pathname + forged.search), { method: 'PUT', headers: upload.headers, body: new Uint8Array(64) })).status, 403, 'and refuses a forged one')

    // Dashboard: the sign-in form's token and pre-session cookie come from `a`, the sign-in goes to `b`.
    const form = await fetch(url(a, '/app/api/session'))
    const { csrfToken } = (await form.json()) as { csrfToken: string }
    const preSession = form.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ')
    const signIn = await fetch(url(b, '/app/api/session'), {
      method: 'POST',
      headers: { cookie: preSession, 'x-csrf-token': csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery staple' }),
    })
    t.equal(signIn.status, 201, `b accepts the sign-in form a signed (${signIn.status})`)
    const session = signIn.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ')
    const me = (await (await fetch(url(a, '/app/api/session'), { headers: { cookie: session } })).json()) as { signedIn: boolean; person?: { email: string } }
    t.ok(me.signedIn, 'and a knows the session cookie b signed')
    t.equal(me.person?.email, email)
  })
}
