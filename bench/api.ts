// REST throughput and latency, each next to a bare fastify route in the same run:
//   GET /v1/notes?limit=20 with NOTES notes in the read model (default 100,000) vs a bare GET
//   route returning a payload of the same size; POST /v1/notes (upload shape) vs a bare POST
//   route that parses the same JSON body and returns a same-sized answer.
// The server runs in a child process (so autocannon does not share its event loop); both use the
// embedded default (SQLite events, embedded read models) in a temp directory.
//   npx tsx bench/api.ts            knobs: NOTES, CONNECTIONS (64), SECONDS (10), PROFILE (a directory)
// ROLES=1,2 (the numbers of API processes to run) measures the scale layout instead, three times:
// sustained (the default READ_MODEL_MAX_LAG back-pressure: creates go as fast as the projections
// process writes them), the write path alone (the projection left to trail), and the API alone
// (the projections process stopped during the burst, so the API has the machine to itself). API
// processes apart from one projections process, on the embedded event store (one SQLite file
// shared by the processes) and MongoDB read models (MONGO_URL, e.g. FerretDB from
// scripts/servers/ferretdb.sh), POST /v1/notes spread over the API processes; next to the durable
// ceiling: as many bare fastify processes, each route appending one event through the same event
// store adapter (group commit, fsync). TRACE=1 prints, per API process, where its requests' time
// went (authentication, rate-limit counter, event store reads and appends, read-your-writes
// waits, presign), from bench/api-server.ts. Each burst also prints who used the machine's CPU
// (per request: load generator, API, projections, FerretDB, other) and the rate the cores would
// allow at that cost: on one machine, every role of the layout competes for the same cores.
import autocannon from 'autocannon'
import { fork, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { dropMongoDatabase } from '../adapters/mongodb/documentStore.ts'
import { cpuBreakdown, cpuSnapshot, type CpuSnapshot } from './lib.ts'

const NOTES = Number(process.env.NOTES ?? 100_000)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 64)
const SECONDS = Number(process.env.SECONDS ?? 10)
const serverScript = fileURLToPath(new URL('./api-server.ts', import.meta.url))

interface Ready {
  port: number
  apiKey?: string
  seedSeconds?: number
  payloadBytes?: number
}

function startServer(mode: 'service' | 'bare' | 'roles' | 'ceiling', env: Record<string, string>): Promise<{ child: ChildProcess; ready: Ready }> {
  // PROFILE=<dir> writes a CPU profile of each server process there (node --cpu-prof).
  const profile = process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : []
  const child = fork(serverScript, [mode], { execArgv: ['--import', 'tsx', ...profile], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ready: m as Ready }))
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)))
  })
}

async function load(title: string, opts: autocannon.Options) {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts })
  const errors = r.errors + r.timeouts + r.non2xx
  const row = { title, 'req/s': Math.round(r.requests.average), p50: r.latency.p50, p97_5: r.latency.p97_5, p99: r.latency.p99, max: r.latency.max, errors }
  console.log(
    `${title.padEnd(44)} ${String(row['req/s']).padStart(7)} req/s   p50 ${String(row.p50).padStart(3)} ms   p99 ${String(row.p99).padStart(4)} ms   max ${String(row.max).padStart(5)} ms   non-2xx/errors ${errors}`,
  )
  return row
}

/** The same load spread over several servers (CONNECTIONS split between them), summed. */
async function loadSpread(title: string, urls: string[], opts: Omit<autocannon.Options, 'url'>, cpuGroups?: CpuGroups) {
  const per = Math.max(1, Math.floor(CONNECTIONS / urls.length))
  const before = cpuGroups && cpuSnapshot()
  const runs = await Promise.all(urls.map((url) => autocannon({ connections: per, duration: SECONDS, ...opts, url })))
  const after = cpuGroups && cpuSnapshot()
  const pick = (f: (r: autocannon.Result) => number, agg: (xs: number[]) => number) => agg(runs.map(f))
  const row = {
    title,
    'req/s': Math.round(pick((r) => r.requests.average, (xs) => xs.reduce((a, b) => a + b, 0))),
    p50: pick((r) => r.latency.p50, (xs) => Math.max(...xs)),
    p99: pick((r) => r.latency.p99, (xs) => Math.max(...xs)),
    max: pick((r) => r.latency.max, (xs) => Math.max(...xs)),
    errors: pick((r) => r.errors + r.timeouts + r.non2xx, (xs) => xs.reduce((a, b) => a + b, 0)),
  }
  console.log(`${title.padEnd(52)} ${String(row['req/s']).padStart(7)} req/s   p50 ${String(row.p50).padStart(3)} ms   p99 ${String(row.p99).padStart(4)} ms   max ${String(row.max).padStart(5)} ms   non-2xx/errors ${row.errors}`)
  if (before && after) printCpu(before, after, cpuGroups!, pick((r) => r.requests.total, (xs) => xs.reduce((a, b) => a + b, 0)))
  return row
}

type CpuGroups = [string, (pid: number, comm: string) => boolean][]
/**
 * Who used the machine's CPU during a run, per request answered, and the rate the machine's cores
 * would allow at that cost if nothing else ran: what the processes of a layout compete for.
 */
function printCpu(before: CpuSnapshot, after: CpuSnapshot, groups: CpuGroups, requests: number) {
  const used = cpuBreakdown(before, after, [['load generator (autocannon)', (pid) => pid === process.pid], ...groups])
  const perRequest = (ms: number) => (ms / Math.max(1, requests)).toFixed(3)
  const sum = used.reduce((a, u) => a + u.ms, 0)
  const busy = (after.busyMs - before.busyMs) / (after.totalMs - before.totalMs)
  console.log(`  CPU during the run: machine ${(busy * 100).toFixed(0)} % busy (${cpus().length} cores); CPU ms per request: ${used.map((u) => `${u.label} ${perRequest(u.ms)}`).join(', ')}; sum ${perRequest(sum)}`)
  console.log(`  at that cost, ${cpus().length} cores allow at most ${Math.round((cpus().length * 1000 * requests) / sum)} req/s`)
}

async function rolesMode(counts: number[]) {
  if (!process.env.MONGO_URL) throw new Error('ROLES mode needs MONGO_URL (eval "$(bash scripts/servers/ferretdb.sh start)")')
  const load1 = () => loadavg().map((l) => l.toFixed(2)).join(' ')
  console.log(`REST scale benchmark: ${CONNECTIONS} connections, ${SECONDS} s per run, Node ${process.version}, load average at start ${load1()}`)
  const body = JSON.stringify({ filename: 'bench.wav', contentType: 'audio/wav', fileSizeBytes: 1000 })
  const json = { 'content-type': 'application/json' }
  const lines: string[] = []
  /**
   * One run of the layout: a projections process and `n` API processes on a fresh data directory.
   * `run`: 'sustained' keeps the API processes' default back-pressure (READ_MODEL_MAX_LAG), and a
   * create-then-GET check follows the burst; 'write path' turns it off and leaves the projection
   * to trail; 'API alone' also stops the projections process (SIGSTOP) for the measured burst, so
   * the API processes have the machine to themselves, as they would on hardware of their own.
   */
  const runLayout = async (n: number, run: 'sustained' | 'write path' | 'API alone') => {
    const maxLag = run === 'sustained' ? null : 1_000_000_000
    const dir = mkdtempSync(join(tmpdir(), 'bench-roles-'))
    const children: ChildProcess[] = []
    const env = { DATA_DIR: dir, MONGO_DB: `bench_roles_${randomUUID().slice(0, 8)}_${n}_${run.replace(' ', '_')}` /* never reused: see bench/create-cpu.ts */, ...(maxLag === null ? {} : { READ_MODEL_MAX_LAG: String(maxLag) }) }
    try {
      const proj = await startServer('roles', { ...env, ROLES: 'projections' })
      children.push(proj.child)
      const apis = []
      for (let i = 0; i < n; i++) {
        const a = await startServer('roles', { ...env, ROLES: 'api', SETUP: i === 0 ? '1' : '0' })
        children.push(a.child)
        apis.push(a.ready)
      }
      const auth = { authorization: `Bearer ${apis[0]!.apiKey}` }
      const urls = apis.map((a) => `http://127.0.0.1:${a.port}/v1/notes`)
      await loadSpread('warm-up', urls, { method: 'POST', headers: { ...auth, ...json }, body, duration: 2 })
      const what = { sustained: 'sustained (back-pressure)', 'write path': 'write path (projection may trail)', 'API alone': 'API alone (projections stopped)' }[run]
      const apiPids = new Set(children.slice(1).map((c) => c.pid))
      if (run === 'API alone') proj.child.kill('SIGSTOP')
      // Resumed whatever happens: a stopped process would not act on the SIGTERM of the clean-up.
      const post = await loadSpread(`POST /v1/notes, ${n} API + projections, ${what}`, urls, { method: 'POST', headers: { ...auth, ...json }, body }, [
        [`API process${n > 1 ? 'es' : ''}`, (pid) => apiPids.has(pid)],
        ['projections process', (pid) => pid === proj.child.pid],
        ['read-model server (FerretDB)', (_pid, comm) => comm === 'ferretdb'],
      ]).finally(() => run === 'API alone' && proj.child.kill('SIGCONT'))
      if (run !== 'sustained') return post
      // Where read-your-writes went: a create, then at once a GET of that note through the last
      // API process (another process than the writer's when there are two), one pair at a time.
      const gets: number[] = []
      for (let i = 0; i < 50; i++) {
        const created = (await (await fetch(urls[0]!, { method: 'POST', headers: { ...auth, ...json }, body })).json()) as { noteId: string }
        const t0 = performance.now()
        const r = await fetch(`${urls.at(-1)!}/${created.noteId}`, { headers: auth })
        await r.arrayBuffer()
        if (r.status !== 200) throw new Error(`GET after POST answered ${r.status}`)
        gets.push(performance.now() - t0)
      }
      gets.sort((a, b) => a - b)
      console.log(`GET of the note just created (${n > 1 ? 'through the other API process' : 'same process'}), 50 sequential pairs: p50 ${gets[25]!.toFixed(1)} ms, max ${gets[49]!.toFixed(1)} ms`)
      return post
    } finally {
      for (const c of children) c.kill('SIGTERM')
      await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((resolve) => c.once('exit', resolve)))))
      rmSync(dir, { recursive: true, force: true })
      await dropMongoDatabase(process.env.MONGO_URL!, env.MONGO_DB)
    }
  }
  for (const n of counts) {
    const runs = { sustained: await runLayout(n, 'sustained'), 'write path': await runLayout(n, 'write path'), 'API alone': await runLayout(n, 'API alone') }
    const children: ChildProcess[] = []
    const cdir = mkdtempSync(join(tmpdir(), 'bench-ceiling-'))
    try {
      const ceilings = []
      for (let i = 0; i < n; i++) {
        const c = await startServer('ceiling', { DATA_DIR: cdir })
        children.push(c.child)
        ceilings.push(c.ready)
      }
      const curls = ceilings.map((c) => `http://127.0.0.1:${c.port}/ceiling`)
      await loadSpread('warm-up', curls, { method: 'POST', headers: json, body, duration: 2 })
      const ceilingPids = new Set(children.map((c) => c.pid))
      const ceiling = await loadSpread(`ceiling: bare route + append, ${n} process(es)`, curls, { method: 'POST', headers: json, body }, [['ceiling process' + (n > 1 ? 'es' : ''), (pid) => ceilingPids.has(pid)]])
      for (const c of children.splice(0)) c.kill('SIGTERM')
      for (const [what, row] of Object.entries(runs)) {
        const met = row['req/s'] >= ceiling['req/s'] / 2 && row.p99 < 25
        lines.push(
          `| ${n} | ${what} | ${row['req/s']} | ${row.p50} / ${row.p99} | ${row.errors} | ${ceiling['req/s']} | ${ceiling.p50} / ${ceiling.p99} | ${(row['req/s'] / ceiling['req/s']).toFixed(2)}x | ${met ? 'yes' : 'no'} |`,
        )
      }
    } finally {
      for (const c of children) c.kill('SIGTERM')
      rmSync(cdir, { recursive: true, force: true })
    }
  }
  console.log(`\n| API processes | run | POST /v1/notes req/s | p50 / p99 ms | errors | ceiling req/s | ceiling p50 / p99 ms | ratio (goal >= 0.5x) | p99 < 25 ms and >= 0.5x? |`)
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---|')
  for (const l of lines) console.log(l)
  console.log(`load average at end ${load1()}`)
}

const dir = mkdtempSync(join(tmpdir(), 'bench-api-'))
if (process.env.ROLES) {
  try {
    await rolesMode(process.env.ROLES.split(',').map(Number))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  process.exit(0)
}
try {
  console.log(`REST benchmark: ${NOTES} notes in the read model, ${CONNECTIONS} connections, ${SECONDS} s per run, Node ${process.version}`)
  const svc = await startServer('service', { DATA_DIR: dir, NOTES: String(NOTES) })
  console.log(`seeded ${NOTES} notes in ${svc.ready.seedSeconds!.toFixed(1)} s; GET page is ${svc.ready.payloadBytes} bytes`)
  const auth = { authorization: `Bearer ${svc.ready.apiKey}` }
  const base = `http://127.0.0.1:${svc.ready.port}`
  await load('warm-up', { url: `${base}/v1/notes?limit=20`, headers: auth, duration: 2 })
  const getSvc = await load('GET /v1/notes?limit=20', { url: `${base}/v1/notes?limit=20`, headers: auth })
  const body = JSON.stringify({ filename: 'bench.wav', contentType: 'audio/wav', fileSizeBytes: 1000 })
  const postSvc = await load('POST /v1/notes (upload)', { url: `${base}/v1/notes`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body })
  svc.child.kill('SIGTERM')

  const bare = await startServer('bare', { PAYLOAD_BYTES: String(svc.ready.payloadBytes) })
  const bbase = `http://127.0.0.1:${bare.ready.port}`
  await load('warm-up', { url: `${bbase}/bare`, duration: 2 })
  const getBare = await load('bare fastify GET, same payload size', { url: `${bbase}/bare` })
  const postBare = await load('bare fastify POST, same body', { url: `${bbase}/bare`, method: 'POST', headers: { 'content-type': 'application/json' }, body })
  bare.child.kill('SIGTERM')

  const verdict = (svc: { 'req/s': number; p99: number }, base: { 'req/s': number }) =>
    `${(svc['req/s'] / base['req/s']).toFixed(2)}x of bare (goal >= 0.5x), p99 ${svc.p99} ms (goal < 25 ms): ${svc['req/s'] >= base['req/s'] / 2 && svc.p99 < 25 ? 'MET' : 'NOT MET'}`
  console.log(`GET  /v1/notes: ${verdict(getSvc, getBare)}`)
  console.log(`POST /v1/notes: ${verdict(postSvc, postBare)}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
