// Two projection processes at once on one MongoDB read-model store (FerretDB here, which `npm
// test` starts; it has no transactions, so this is the path where a batch and its checkpoint are
// separate writes): each projection's lease lets one of them write while the other stands by, and
// the read models come out identical to a single-process rebuild. Then the process holding the
// notes projection's lease is killed; the other takes its leases over after they lapse and carries on, and
// the read models again equal a rebuild.
// MONGO_URL unset: nothing to run here; say so and pass.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { tempDir } from './support/tmp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { READ_MODEL_PROJECTIONS } from '../app/projections.ts'
import { rebuildProjection } from '../projections/runner.ts'
import { LEASES } from '../projections/lease.ts'
import { noteStream } from '../domain/notes/note.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { EventStore } from '../ports/eventStore.ts'

const mongoUrl = process.env.MONGO_URL
const replicaScript = fileURLToPath(new URL('./support/apiReplica.ts', import.meta.url))

function startReplica(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', replicaScript], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{"port"')) resolve(child)
    })
    child.once('exit', (code) => reject(new Error(`projection process exited with ${code}`)))
  })
}

const stop = (c: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve()
    c.once('exit', () => resolve())
    c.kill('SIGTERM')
  })

/** Accounts, API keys (some revoked) and notes: events for the ledger, API-key and notes projections. */
async function writeEvents(events: EventStore, docs: DocumentStore, n: number) {
  const { loadConfig } = await import('../app/config.ts')
  const { createServices } = await import('../app/services.ts')
  const { ffprobeMediaProbe } = await import('../adapters/ffprobe/mediaProbe.ts')
  const { staticResolver } = await import('./support/service.ts')
  const s = createServices(loadConfig({ DATA_DIR: tempDir().dir, SEED_DEMO: '0' }), { events, docs, probe: ffprobeMediaProbe(), resolver: staticResolver(), projections: [] })
  for (let i = 0; i < n; i++) {
    const { accountId } = await s.accounts.openAccount({ name: `account ${i}`, plan: i % 2 ? 'pro' : 'power' })
    const key = await s.accounts.createApiKey(accountId)
    if (i % 3 === 0) await s.accounts.revokeApiKey(accountId, key.keyId)
    const noteId = randomUUID()
    await events.appendToStream(
      noteStream.of(noteId),
      [
        {
          id: randomUUID(),
          type: 'NoteCreated',
          data: { noteId, accountId, sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: `Note ${i}`, language: null, keepAudio: false, upload: { filename: `n${i}.wav`, contentType: 'audio/wav', declaredBytes: null }, jobId: null, reservationId: null, at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() },
        },
      ],
      { expectedRevision: 'no_stream' },
    )
  }
}

/** Every projection's collections, sorted by _id. */
async function snapshot(docs: DocumentStore): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {}
  for (const p of READ_MODEL_PROJECTIONS) for (const c of p.collections) out[c] = await docs.collection(c).find({}, { sort: { _id: 1 } })
  return out
}

async function rebuilt(events: EventStore, docs: DocumentStore) {
  for (const p of READ_MODEL_PROJECTIONS) await rebuildProjection(p, { events, docs })
  return snapshot(docs)
}

/** Polls until the live read models equal `expected` (the two processes may still be catching up). */
async function converge(live: DocumentStore, expected: Record<string, unknown[]>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  let last: Record<string, unknown[]> = {}
  while (Date.now() < deadline) {
    last = await snapshot(live)
    if (JSON.stringify(last) === JSON.stringify(expected)) return last
    await new Promise((r) => setTimeout(r, 250))
  }
  return last
}

if (!mongoUrl) {
  t.comment('MONGO_URL is not set: the two-process projection test needs MongoDB (npm test starts FerretDB)')
} else {
  t.test('two projection processes at once: one writes per projection, the read model equals a single-process rebuild, and a takeover keeps it so', async (t) => {
    const { openMongoDocumentStore, dropMongoDatabase } = await import('../adapters/mongodb/documentStore.ts')
    const tmp = tempDir()
    const suffix = randomUUID().replace(/-/g, '').slice(0, 10)
    const liveDb = `test_twoproj_${suffix}`
    const rebuildDb = `test_rebuild_${suffix}`
    const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
    const live = await openMongoDocumentStore(mongoUrl, liveDb)
    const single = await openMongoDocumentStore(mongoUrl, rebuildDb)
    t.equal(live.atomicWriteBatches, false, 'FerretDB has no transactions: this is the path where a batch and its checkpoint are separate writes')
    const env = { DATA_DIR: tmp.dir, MONGO_URL: mongoUrl, MONGO_DB: liveDb, ROLES: 'projections', LEASE_TTL_SECONDS: '2' }
    const procs = [await startReplica(env), await startReplica(env)]
    t.teardown(async () => {
      await Promise.all(procs.map(stop))
      await events.close()
      await live.close()
      await single.close()
      await dropMongoDatabase(mongoUrl, liveDb)
      await dropMongoDatabase(mongoUrl, rebuildDb)
      await dropMongoDatabase(mongoUrl, `${liveDb}_keys`)
      tmp.remove()
    })

    await writeEvents(events, live, 12)
    const expected = await rebuilt(events, single)
    t.ok(expected.notes!.length === 12 && expected.api_keys!.length === 12, 'the rebuild holds what was written')
    t.same(await converge(live, expected, 120_000), expected, 'two processes at once: identical to a single-process rebuild')

    const leases = await live.collection<{ _id: string; holder: string }>(LEASES).find({})
    const pids = new Set(procs.map((p) => String(p.pid)))
    t.ok(leases.length >= 3 && leases.every((l) => pids.has(l.holder.split(':')[1]!)), `each projection that wrote has one holder among the two processes (${leases.length} leases)`)

    // The holder of the notes lease dies without letting go; the other takes over after 2 s.
    const notesHolder = leases.find((l) => l._id === 'notes')!.holder.split(':')[1]!
    const victim = procs.find((p) => String(p.pid) === notesHolder)!
    victim.kill('SIGKILL')
    await new Promise((r) => victim.once('exit', r))
    await writeEvents(events, live, 8)
    const expected2 = await rebuilt(events, single)
    t.same(await converge(live, expected2, 120_000), expected2, 'after the takeover: identical to a rebuild again')
    const after = await live.collection<{ _id: string; holder: string }>(LEASES).findOne({ _id: 'notes' })
    t.not(after!.holder.split(':')[1], notesHolder, 'the survivor holds the notes lease')
  })
}
