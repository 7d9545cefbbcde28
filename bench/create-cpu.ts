// CPU time of one note create at each layer, in one process, 64 at a time: the command alone
// (notes.create: decide, seal, group commit, presign) and the whole REST app (app.inject: the
// hooks, schema, serialization on top). The API role of the scale layout, on the embedded event
// store and MongoDB read models (MONGO_URL), with the projections in a process of their own as
// in `ROLES=1 npx tsx bench/api.ts`; read-your-writes back-pressure is off so only the write path
// is measured. Compare with the "CPU per request" lines of `ROLES=1 TRACE=1 npx tsx bench/api.ts`
// (over HTTP, and the ceiling's).
//   eval "$(bash scripts/servers/ferretdb.sh start)"; npx tsx bench/create-cpu.ts     knobs: N (6000)
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../app/config.ts'
import { startService } from '../app/server.ts'
import { dropMongoDatabase } from '../adapters/mongodb/documentStore.ts'

if (!process.env.MONGO_URL) throw new Error('needs MONGO_URL (eval "$(bash scripts/servers/ferretdb.sh start)")')
const N = Number(process.env.N ?? 6000)
const CONCURRENCY = 64
const dir = mkdtempSync(join(tmpdir(), 'bench-create-cpu-'))
// A name never used before: FerretDB (SQLite backend) leaves a dropped database's -wal and -shm
// files behind, and a new database of the same name (a recycled pid) crashed it with SIGBUS.
const env = { DATA_DIR: dir, MONGO_DB: `bench_create_cpu_${randomUUID().slice(0, 8)}` }
const projections = fork(fileURLToPath(new URL('./api-server.ts', import.meta.url)), ['roles'], {
  execArgv: ['--import', 'tsx'],
  env: { ...process.env, ...env, ROLES: 'projections' },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
})
await new Promise((resolve) => projections.once('message', resolve))
const config = loadConfig({ ...process.env, ...env, PORT: '0', MCP_PORT: '0', RATE_LIMIT_MAX: '100000000', SEED_DEMO: '0', LOG_LEVEL: 'warn', ROLES: 'api', READ_MODEL_MAX_LAG: '1000000000' })
const service = await startService(config, () => {})
try {
  const s = service.services
  const { accountId } = await s.accounts.openAccount({ name: 'bench', plan: 'power' })
  const { apiKey } = await s.accounts.createApiKey(accountId)
  const body = { filename: 'bench.wav', contentType: 'audio/wav', fileSizeBytes: 1000 }

  const measure = async (name: string, op: () => Promise<unknown>) => {
    const rounds = async (n: number) => {
      for (let i = 0; i < n; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, op))
    }
    await rounds(640)
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    await rounds(N)
    const cpu = process.cpuUsage(cpu0)
    console.log(`${name.padEnd(48)} CPU ${((cpu.user + cpu.system) / 1000 / N).toFixed(3)} ms per create   wall ${((performance.now() - t0) / N).toFixed(3)} ms per create`)
  }
  console.log(`CPU per note create, ${N} creates, ${CONCURRENCY} at a time, Node ${process.version}`)
  await measure('the command (notes.create)', () => s.notes.create({ accountId, plan: 'power', keyId: null, requestId: randomUUID(), via: 'rest' }, body))
  await measure('the REST app (app.inject POST /v1/notes)', () =>
    service.app!.inject({ method: 'POST', url: '/v1/notes', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) }),
  )
} finally {
  await service.close()
  projections.kill('SIGTERM')
  await new Promise((resolve) => projections.once('exit', resolve))
  rmSync(dir, { recursive: true, force: true })
  await dropMongoDatabase(process.env.MONGO_URL, env.MONGO_DB)
}
