// Boot after read-model loss (issue 13, finding 3): the read-model store is deleted while the
// event store survives; the service starts again, its projections rebuild the read models from
// the log, and the demo seeding waits for the projections it reads instead of failing the start.
import t from 'tap'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../app/config.ts'
import { startService, type RunningService } from '../app/server.ts'
import { READ_MODEL_PROJECTIONS } from '../app/projections.ts'
import { CHECKPOINTS } from '../projections/runner.ts'
import { tempDir } from './support/tmp.ts'
import { randomUUID } from 'node:crypto'

const quiet = () => {}

const canonical = (v: unknown): string =>
  Array.isArray(v) ? `[${v.map(canonical).join(',')}]` : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}` : JSON.stringify(v)

async function snapshot(s: RunningService): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {}
  for (const p of READ_MODEL_PROJECTIONS) {
    for (const c of p.collections) {
      const docs = await s.services.docs.collection<{ _id: string }>(c).find({})
      out[c] = docs.map(canonical).sort()
    }
  }
  return out
}

/**
 * /readyz once every projection runs and has nothing left to apply. A start does not wait for
 * the read models it does not read itself, so right after a loss some are still rebuilding (on
 * FerretDB, translations and voice profiles were still starting in one CI run): poll, with a
 * deadline, rather than look once.
 */
async function rebuilt(s: RunningService, deadlineMs = 60_000): Promise<{ statusCode: number; projections: { name: string; state: string; behind: number }[] }> {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    // The operator's detail (the public /readyz says ready or not, nothing more).
    const r = await s.services.readiness()
    const statusCode = r.ready ? 200 : 503
    const projections = r.projections as { name: string; state: string; behind: number }[]
    if (r.ready && projections.every((p) => p.state === 'running' && p.behind === 0)) return { statusCode, projections }
    if (Date.now() > deadline) return { statusCode, projections }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

t.test('given a service whose read-model store is lost, when it starts again, then it rebuilds the read models and serves', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const config = loadConfig({ DATA_DIR: tmp.dir, PORT: '0', MCP_PORT: '0', ASR_BASE_URL: 'http://127.0.0.1:9/v1', LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', HEALTH_PORT: 'off' })

  const first = await startService(config, quiet)
  // Everything the first start wrote, once its projections have caught up.
  const demo = await first.services.readiness()
  t.ok(demo.ready)
  const before = await snapshot(first)
  await first.close()

  for (const name of readdirSync(tmp.dir)) if (name.startsWith('readmodels')) rmSync(join(tmp.dir, name), { recursive: true, force: true })

  for (let boot = 1; boot <= 3; boot++) {
    const again = await startService(config, quiet)
    const ready = await rebuilt(again)
    t.equal(ready.statusCode, 200, `boot ${boot}: ready`)
    for (const p of ready.projections) t.equal(p.state, 'running', `boot ${boot}: ${p.name} running`)
    const cps = await again.services.docs.collection(CHECKPOINTS).countDocuments({})
    t.ok(cps >= READ_MODEL_PROJECTIONS.length, `boot ${boot}: checkpoints written`)
    if (boot === 1) t.same(await snapshot(again), before, 'rebuilt read models equal the lost ones')
    await again.close()
    if (boot < 3) for (const name of readdirSync(tmp.dir)) if (name.startsWith('readmodels')) rmSync(join(tmp.dir, name), { recursive: true, force: true })
  }
})

// The same on MongoDB (FerretDB here, which `npm test` starts): the read-model database is
// dropped while the event store (SQLite in DATA_DIR) survives, three times over. Besides the demo
// library, an account of its own with a key, a folder and a note (an upload), so the ledger, keys,
// folders and notes have something to rebuild.
const mongoUrl = process.env.MONGO_URL
if (!mongoUrl) {
  t.comment('MONGO_URL is not set: the MongoDB read-model loss test needs MongoDB (npm test starts FerretDB)')
} else {
  t.test('given a service whose MongoDB read-model database is lost, when it starts again (3 times), then it rebuilds the read models and serves', async (t) => {
    const { dropMongoDatabase } = await import('../adapters/mongodb/documentStore.ts')
    const tmp = tempDir()
    const db = `test_boot_loss_${randomUUID().replace(/-/g, '').slice(0, 10)}`
    t.teardown(async () => {
      await dropMongoDatabase(mongoUrl, db)
      await dropMongoDatabase(mongoUrl, `${db}_keys`)
      tmp.remove()
    })
    const config = loadConfig({ DATA_DIR: tmp.dir, MONGO_URL: mongoUrl, MONGO_DB: db, PORT: '0', MCP_PORT: '0', ASR_BASE_URL: 'http://127.0.0.1:9/v1', LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', HEALTH_PORT: 'off' })

    const first = await startService(config, quiet)
    t.ok((await first.services.readiness()).ready)
    const { accountId } = await first.services.accounts.openAccount({ name: 'loss test', plan: 'power' })
    const { apiKey } = await first.services.accounts.createApiKey(accountId)
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
    const created = await first.app!.inject({ method: 'POST', url: '/v1/notes', headers: auth, payload: JSON.stringify({ filename: 'loss.wav', contentType: 'audio/wav', title: 'Before the loss' }) })
    t.equal(created.statusCode, 202)
    const noteId = created.json().noteId as string
    t.equal((await first.app!.inject({ method: 'POST', url: '/v1/folders', headers: auth, payload: JSON.stringify({ name: 'Kept' }) })).statusCode, 201)
    // Every projection caught up with everything written, then the snapshot of what is lost.
    const caughtUp = async (s: RunningService) => {
      const head = (await s.services.events.readAll()).at(-1)!.globalPosition
      for (const p of s.services.projectionPositions()) await s.services.sync.waitFor(p.name, head)
      return snapshot(s)
    }
    let before = await caughtUp(first)
    t.ok((before.notes ?? []).length > 0 && (before.ledger_entries ?? []).length > 0, 'there is something to lose')
    await first.close()

    for (let boot = 1; boot <= 3; boot++) {
      await dropMongoDatabase(mongoUrl, db)
      const again = await startService(config, quiet)
      const ready = await rebuilt(again)
      t.equal(ready.statusCode, 200, `boot ${boot}: ready`)
      for (const p of ready.projections) t.equal(p.state, 'running', `boot ${boot}: ${p.name} running and caught up (${p.behind} behind)`)
      t.same(await snapshot(again), before, `boot ${boot}: the rebuilt read models equal the lost ones`)
      const note = await again.app!.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: auth })
      // (Load shedding is off: a rebuild on a machine other suites load may lag the event loop.)
      t.match({ status: note.statusCode, body: note.json() }, { status: 200, body: { id: noteId, title: 'Before the loss' } }, `boot ${boot}: serves the note (${note.statusCode === 200 ? "ok" : note.body})`)
      const list = await again.app!.inject({ method: 'GET', url: '/v1/notes?limit=10', headers: auth })
      t.equal(list.json().notes?.length ?? list.json().data?.length, 1, `boot ${boot}: lists it`)
      // Serving wrote events too (the key's last use): what the next loss loses is this.
      before = await caughtUp(again)
      await again.close()
    }
  })
}
