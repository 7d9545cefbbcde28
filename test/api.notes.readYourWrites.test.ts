// Read-your-writes moved from the write to the read (issue 13, the scale benchmark): POST
// /v1/notes answers from the command's own events without waiting for the notes projection, and
// the account's next read waits for the note only if the projection has not got there yet.
// Before, every create waited for the projection (up to the 5 s read-your-writes timeout when it
// was behind, which is what capped the scale layout at ~20 creates a second).
import t from 'tap'
import { join } from 'node:path'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { ffprobeMediaProbe } from '../adapters/ffprobe/mediaProbe.ts'
import { loadConfig } from '../app/config.ts'
import { createServices } from '../app/services.ts'
import { READ_MODEL_PROJECTIONS } from '../app/projections.ts'
import { buildRestHost } from '../app/http.ts'
import { readCheckpoint, startProjection, type RunningProjection } from '../projections/runner.ts'
import { readModelSync } from '../projections/sync.ts'
import { staticResolver, testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'

t.test('given the notes projection is not running, when a note is created, then POST answers at once, and a GET waits for the note and finds it', async (t) => {
  const tmp = tempDir()
  const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'readmodels.db') })
  // Every projection but the notes one, which starts later (as if another process ran it, behind).
  const running: RunningProjection[] = READ_MODEL_PROJECTIONS.filter((p) => p.name !== 'notes').map((p) => startProjection(p, { events, docs }))
  const config = loadConfig({ DATA_DIR: tmp.dir, PORT: '3000', RATE_LIMIT_MAX: '100000', MAX_EVENT_LOOP_DELAY_MS: '0', SEED_DEMO: '0' })
  const services = createServices(config, { events, docs, probe: ffprobeMediaProbe(), resolver: staticResolver({}), projections: running })
  const app = buildRestHost(services)
  await app.ready()
  t.teardown(async () => {
    await app.close()
    for (const p of running) await p.stop()
    await events.close()
    await docs.close()
    tmp.remove()
  })
  const { accountId } = await services.accounts.openAccount({ name: 'ryw', plan: 'pro' })
  const { apiKey } = await services.accounts.createApiKey(accountId)
  const headers = { authorization: `Bearer ${apiKey}` }
  const other = await services.accounts.openAccount({ name: 'other', plan: 'pro' })
  const otherHeaders = { authorization: `Bearer ${(await services.accounts.createApiKey(other.accountId)).apiKey}` }

  const started = Date.now()
  const post = await app.inject({ method: 'POST', url: '/v1/notes', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ filename: 'a.wav', contentType: 'audio/wav', title: 'Standup' }) })
  const tookMs = Date.now() - started
  t.equal(post.statusCode, 202)
  const { noteId } = post.json() as { noteId: string }
  t.ok(tookMs < 2000, `POST answered without the notes projection (${tookMs} ms; it used to wait up to 5 s)`)
  t.equal(await readCheckpoint(docs, 'notes'), -1, 'the notes read model had not seen the note when POST answered')

  // An account that wrote nothing reads at once, without waiting for the projection.
  const t0 = Date.now()
  const otherList = await app.inject({ method: 'GET', url: '/v1/notes?limit=5', headers: otherHeaders })
  t.equal(otherList.statusCode, 200)
  t.ok(Date.now() - t0 < 2000, `another account's read does not wait (${Date.now() - t0} ms)`)

  // Another API process (the scale layout: same event store and read models, no projections)
  // knows nothing of the write; a read of that note finds it in the log and waits for it too.
  const otherProcess = buildRestHost(createServices(config, { events, docs, probe: ffprobeMediaProbe(), resolver: staticResolver({}), projections: [] }))
  await otherProcess.ready()
  t.teardown(() => otherProcess.close())
  const missing = await otherProcess.inject({ method: 'GET', url: '/v1/notes/00000000-0000-4000-8000-000000000000', headers })
  t.equal(missing.statusCode, 404, 'a note that is nowhere is 404 at once')
  const notYours = await otherProcess.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: otherHeaders })
  t.equal(notYours.statusCode, 404, "another account's read of it is 404 at once")

  // The writer's next reads wait for the projection, which starts only now.
  const detail = app.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers })
  const list = app.inject({ method: 'GET', url: '/v1/notes?limit=5', headers })
  const elsewhere = otherProcess.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers })
  setTimeout(() => running.push(startProjection(READ_MODEL_PROJECTIONS.find((p) => p.name === 'notes')!, { events, docs })), 300)
  const [d, l, e] = await Promise.all([detail, list, elsewhere])
  t.equal(d.statusCode, 200, 'GET of the new note finds it')
  t.match(d.json(), { id: noteId, title: 'Standup', status: 'processing' })
  t.equal(e.statusCode, 200, 'and so does a GET through another API process')
  t.same(
    (l.json() as { notes: { id: string }[] }).notes.map((n) => n.id),
    [noteId],
    'the list has it too',
  )

  // PATCH answers from the read model: it still shows the edit.
  const patched = await app.inject({ method: 'PATCH', url: `/v1/notes/${noteId}`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ title: 'Daily standup' }) })
  t.equal(patched.statusCode, 200)
  t.match(patched.json(), { id: noteId, title: 'Daily standup' })
})

t.test('given writes recorded for an account, then readable waits for the highest position and forgets what was applied', async (t) => {
  let position = 5
  const waits: number[] = []
  const notes = {
    name: 'notes',
    position: () => position,
    waitFor: async (p: number) => void waits.push(p),
  } as unknown as RunningProjection
  const docs = openEmbeddedDocumentStore({ path: ':memory:' })
  t.teardown(() => docs.close())
  const sync = readModelSync(docs, [notes])
  sync.wrote('a', 'notes', 4)
  t.equal(sync.readable('a', 'notes'), null, 'a position already applied is not remembered')
  sync.wrote('a', 'notes', 7)
  sync.wrote('a', 'notes', 9)
  sync.wrote('a', 'notes', 8)
  t.equal(sync.readable('b', 'notes'), null, 'another account waits for nothing')
  t.equal(sync.readable('a', 'other'), null, 'another read model waits for nothing')
  await sync.readable('a', 'notes')
  t.same(waits, [9], 'the account waits once, for its highest write')
  position = 9
  t.equal(sync.readable('a', 'notes'), null, 'and then no more')
})

t.test('given a projection far behind, then a write waits until it is back within the allowed distance (back-pressure), and not otherwise', async (t) => {
  let position = 100
  const waits: number[] = []
  const notes = { name: 'notes', position: () => position, waitFor: async (p: number) => void waits.push(p) } as unknown as RunningProjection
  const docs = openEmbeddedDocumentStore({ path: ':memory:' })
  t.teardown(() => docs.close())
  const sync = readModelSync(docs, [notes], { maxLagPositions: 256 })
  t.equal(sync.wrote('a', 'notes', 300), null, '200 behind: answers at once')
  const wait = sync.wrote('a', 'notes', 1000)
  t.ok(wait, '900 behind: waits')
  await wait
  t.same(waits, [1000 - 256], 'until the projection is within 256 positions of the write')
  position = 800
  t.equal(sync.wrote('b', 'notes', 1000), null, 'once it caught up, writes answer at once again')
})

t.test('READ_MODEL_MAX_LAG: given 0, then every create waits until its note is readable; the default allows 256 positions; garbage is refused at start', async (t) => {
  t.equal(loadConfig({}).readModelMaxLag, 256)
  t.equal(loadConfig({ READ_MODEL_MAX_LAG: '0' }).readModelMaxLag, 0)
  t.throws(() => loadConfig({ READ_MODEL_MAX_LAG: '-1' }), /READ_MODEL_MAX_LAG must be a non-negative integer/)
  const s = await testService({ env: { READ_MODEL_MAX_LAG: '0' } })
  t.teardown(s.close)
  const { headers } = await s.account('pro')
  const notes = s.services.projections.find((p) => p.name === 'notes')!
  for (let i = 0; i < 5; i++) {
    const r = await s.inject({ method: 'POST', url: '/v1/notes', headers, payload: { filename: `a${i}.wav`, contentType: 'audio/wav' } })
    t.equal(r.statusCode, 202)
    const stored = await s.docs.collection('notes').findOne({ _id: r.json().noteId })
    t.ok(stored, `create ${i}: the note is in the read model when the answer comes (projection at ${notes.position()})`)
  }
})
