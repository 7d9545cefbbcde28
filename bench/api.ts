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
import Database from 'libsql'
import { dropMongoDatabase, openMongoDocumentStore } from '../adapters/mongodb/documentStore.ts'
import { startCountingProxy } from './countingProxy.ts'
import { cpuBreakdown, cpuSnapshot, machineLoad, type CpuSnapshot } from './lib.ts'

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

// ---- MIXED=1: creates, edits and imports at once (issue 31) ----

/** The last position of the SQLite event log in `dataDir` (the events appended so far). */
function logPosition(dataDir: string): number {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true })
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%position%INTEGER PRIMARY KEY AUTOINCREMENT%'").all() as { name: string }[]
    return Math.max(0, ...tables.map((t) => Number((db.prepare(`SELECT max(position) AS p FROM "${t.name}"`).get() as { p: number | null }).p ?? 0)))
  } finally {
    db.close()
  }
}

const pct = (xs: number[], p: number) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!)

/**
 * The mixed load against one API: open loop, for SECONDS, EDITS_PER_SEC `PATCH /v1/notes/:id`
 * (each followed at once by a GET of the note, repeated until it shows the new title: the
 * read-your-writes latency), CREATES_PER_SEC `POST /v1/notes` and IMPORTS_PER_SEC URL imports'
 * whole lifecycle (appended by the server process, see bench/api-server.ts). Then the same mix
 * closed-loop (as fast as it goes: CONNECTIONS/2 editors, CONNECTIONS/2 creators) for the
 * throughput. `roundTrips` counts the projections' requests to the read-model store, if known.
 */
async function mixedLoad(label: string, apiUrl: string, apiKey: string, importer: ChildProcess, dataDir: string, roundTrips?: () => number) {
  const EDITS = Number(process.env.EDITS_PER_SEC ?? 50)
  const CREATES = Number(process.env.CREATES_PER_SEC ?? 20)
  const IMPORTS = Number(process.env.IMPORTS_PER_SEC ?? 2)
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
  const body = JSON.stringify({ filename: 'bench.wav', contentType: 'audio/wav', fileSizeBytes: 1000 })
  const create = async () => {
    const r = await fetch(`${apiUrl}/v1/notes`, { method: 'POST', headers, body })
    if (r.status < 200 || r.status > 299) throw new Error(`POST /v1/notes answered ${r.status}`)
    return ((await r.json()) as { noteId: string }).noteId
  }
  const targets: string[] = []
  for (let i = 0; i < 100; i++) targets.push(await create())
  let seq = 0
  const stats = { edits: 0, creates: 0, stale: 0, lost: 0, rywMs: [] as number[], patchMs: [] as number[] }
  /** PATCH a title, then GET until the note shows it (5 s at most): the read-your-writes latency, from the PATCH's answer to the GET showing the title. */
  const edit = async () => {
    const id = targets[seq++ % targets.length]!
    const title = `edited ${seq} ${randomUUID().slice(0, 6)}`
    const t0 = performance.now()
    const r = await fetch(`${apiUrl}/v1/notes/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ title }) })
    await r.arrayBuffer()
    if (r.status !== 200) throw new Error(`PATCH answered ${r.status}`)
    const acked = performance.now()
    stats.patchMs.push(acked - t0)
    for (let first = true; ; first = false) {
      const g = (await (await fetch(`${apiUrl}/v1/notes/${id}`, { headers })).json()) as { title?: string; note?: { title?: string } }
      if ((g.note?.title ?? g.title) === title) break
      if (first) stats.stale++
      if (performance.now() - t0 > 5000) return void stats.lost++
      await new Promise((res) => setTimeout(res, 5))
    }
    stats.rywMs.push(performance.now() - acked)
    stats.edits++
  }
  const imports = (n: number) =>
    new Promise<void>((resolve) => {
      const on = (m: { imported?: number }) => m.imported !== undefined && (importer.off('message', on), resolve())
      importer.on('message', on)
      importer.send({ imports: n })
    })
  const settle = async () => {
    // Until the projections have applied everything (a note's last import event shows on its GET).
    const id = await create()
    const t0 = performance.now()
    const title = `settle ${randomUUID()}`
    await fetch(`${apiUrl}/v1/notes/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ title }) })
    while (performance.now() - t0 < 120_000) {
      const g = (await (await fetch(`${apiUrl}/v1/notes/${id}`, { headers })).json()) as { title?: string; note?: { title?: string } }
      if ((g.note?.title ?? g.title) === title) return
      await new Promise((res) => setTimeout(res, 20))
    }
  }
  // Open loop: requests start on schedule whatever the answers take.
  const before = { at: performance.now(), log: logPosition(dataDir), trips: roundTrips?.() ?? 0 }
  const inflight: Promise<unknown>[] = []
  const tick = (perSec: number, fn: () => Promise<unknown>) => (perSec > 0 ? setInterval(() => inflight.push(fn().catch((err) => console.error(String(err)))), 1000 / perSec) : null)
  const timers = [tick(EDITS, edit), tick(CREATES, () => create().then(() => stats.creates++)), tick(IMPORTS > 0 ? 1 : 0, () => imports(IMPORTS))]
  await new Promise((res) => setTimeout(res, SECONDS * 1000))
  for (const t of timers) if (t) clearInterval(t)
  await Promise.all(inflight)
  await settle()
  const openSecs = (performance.now() - before.at) / 1000
  const events = logPosition(dataDir) - before.log
  const trips = (roundTrips?.() ?? 0) - before.trips
  console.log(
    `${label}, open loop ${EDITS} edits/s + ${CREATES} creates/s + ${IMPORTS} imports/s for ${SECONDS} s: ${stats.edits} edits, ${stats.creates} creates; ` +
      `PATCH p50 ${pct(stats.patchMs, 0.5).toFixed(1)} / p99 ${pct(stats.patchMs, 0.99).toFixed(1)} ms; from the PATCH's answer until a GET shows the new title: p50 ${pct(stats.rywMs, 0.5).toFixed(1)} / p99 ${pct(stats.rywMs, 0.99).toFixed(1)} / max ${pct(stats.rywMs, 1).toFixed(1)} ms ` +
      `(goal p99 < 100 ms); first GET stale ${stats.stale} of ${stats.edits + stats.lost}, not shown within 5 s ${stats.lost}` +
      (roundTrips ? `; projections' requests to the read-model store ${trips} for ${events} events = ${(trips / Math.max(1, events)).toFixed(2)} per event (until applied, ${openSecs.toFixed(1)} s)` : ''),
  )
  // Closed loop: as fast as the layout goes.
  const stop = performance.now() + SECONDS * 1000
  const closed = { edits: 0, creates: 0, editMs: [] as number[] }
  const c0 = { log: logPosition(dataDir), trips: roundTrips?.() ?? 0 }
  const editor = async () => {
    while (performance.now() < stop) {
      const n = stats.edits
      await edit()
      if (stats.edits > n) (closed.edits++, closed.editMs.push(stats.rywMs.at(-1)!))
    }
  }
  const creator = async () => {
    while (performance.now() < stop) (await create(), closed.creates++)
  }
  const importLoop = async () => {
    while (performance.now() < stop) await imports(Math.max(1, IMPORTS))
  }
  const half = Math.max(1, Math.floor(CONNECTIONS / 2))
  await Promise.all([...Array.from({ length: half }, editor), ...Array.from({ length: half }, creator), IMPORTS > 0 ? importLoop() : null])
  const t1 = performance.now()
  await settle()
  const settleSecs = (performance.now() - t1) / 1000
  const cEvents = logPosition(dataDir) - c0.log
  const cTrips = (roundTrips?.() ?? 0) - c0.trips
  console.log(
    `${label}, closed loop (${half} editors, ${half} creators${IMPORTS > 0 ? ', imports' : ''}) for ${SECONDS} s: ${(closed.edits / SECONDS).toFixed(1)} edits/s (answer to a GET showing it: p50 ${pct(closed.editMs, 0.5).toFixed(0)} / p99 ${pct(closed.editMs, 0.99).toFixed(0)} ms), ${(closed.creates / SECONDS).toFixed(1)} creates/s; ` +
      `${cEvents} events, the projections caught up ${settleSecs.toFixed(1)} s after the load` +
      (roundTrips ? `; requests to the read-model store ${cTrips} = ${(cTrips / Math.max(1, cEvents)).toFixed(2)} per event` : ''),
  )
}

/** The same-run baseline of the embedded store: a raw SQLite loop of autocommitted INSERTs (WAL, synchronous=FULL) for 2 s. */
function rawSqliteInserts(): number {
  const d = mkdtempSync(join(tmpdir(), 'bench-raw-'))
  try {
    const db = new Database(join(d, 'raw.db'))
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT)')
    const insert = db.prepare('INSERT INTO t (id, body) VALUES (?, ?)')
    const body = JSON.stringify({ title: 'x'.repeat(200) })
    let n = 0
    const t0 = performance.now()
    while (performance.now() - t0 < 2000) insert.run(randomUUID(), body), n++
    db.close()
    return n / ((performance.now() - t0) / 1000)
  } finally {
    rmSync(d, { recursive: true, force: true })
  }
}

/** The same-run baseline of FerretDB: sequential revision-guarded updates (`{ _id, revision }`) and updates by `_id` alone, in a collection of `count` notes-sized documents. */
async function rawFerretUpdates(url: string, count: number) {
  const dbName = `bench_raw_${randomUUID().slice(0, 8)}`
  const store = await openMongoDocumentStore(url, dbName)
  try {
    const c = store.collection('notes')
    for (let i = 0; i < count; i += 1000) await c.insertMany(Array.from({ length: Math.min(1000, count - i) }, (_, k) => ({ _id: `n${i + k}`, revision: 0, title: `Meeting number ${i + k}`, searchTokens: ['meeting', 'number', String(i + k)] })))
    const rate = async (fn: (i: number) => Promise<unknown>) => {
      let n = 0
      const t0 = performance.now()
      while (performance.now() - t0 < 2000) await fn(n++)
      return n / ((performance.now() - t0) / 1000)
    }
    const guarded = await rate((i) => c.updateOne({ _id: `n${i}`, revision: 0 }, { $set: { revision: 1 } }))
    const byId = await rate((i) => c.updateOne({ _id: `n${count - 1 - i}` }, { $set: { revision: 2 } }))
    return { guarded, byId }
  } finally {
    await store.close()
    await dropMongoDatabase(url, dbName)
  }
}

async function mixedMode() {
  const notes = Number(process.env.NOTES ?? 20_000)
  console.log(`mixed benchmark: ${notes} notes, ${CONNECTIONS} connections in the closed loop, ${SECONDS} s per run, Node ${process.version}, ${machineLoad()}`)
  const mongo = process.env.MONGO_URL
  if (!mongo) {
    console.log(`baseline: raw SQLite insert loop (autocommitted INSERT, WAL, synchronous=FULL): ${Math.round(rawSqliteInserts())} inserts/s`)
    const d = mkdtempSync(join(tmpdir(), 'bench-mixed-'))
    const svc = await startServer('service', { DATA_DIR: d, NOTES: String(notes) })
    try {
      console.log(`embedded default (one process), seeded ${notes} notes in ${svc.ready.seedSeconds!.toFixed(1)} s`)
      await mixedLoad('embedded', `http://127.0.0.1:${svc.ready.port}`, svc.ready.apiKey!, svc.child, d)
    } finally {
      svc.child.kill('SIGTERM')
      rmSync(d, { recursive: true, force: true })
    }
  } else {
    const raw = await rawFerretUpdates(mongo, notes)
    console.log(`baseline: FerretDB at ${notes} documents, sequential updateOne: by { _id, revision } (a guarded write) ${raw.guarded.toFixed(1)}/s, by _id alone ${raw.byId.toFixed(1)}/s`)
    const d = mkdtempSync(join(tmpdir(), 'bench-mixed-'))
    const proxy = await startCountingProxy(mongo)
    const env = { DATA_DIR: d, MONGO_DB: `bench_mixed_${randomUUID().slice(0, 8)}` }
    const children: ChildProcess[] = []
    try {
      const proj = await startServer('roles', { ...env, ROLES: 'projections', MONGO_URL: proxy.url })
      children.push(proj.child)
      const api = await startServer('roles', { ...env, ROLES: 'api', SETUP: '1' })
      children.push(api.child)
      const url = `http://127.0.0.1:${api.ready.port}`
      // The read model at `notes` notes: creates through the API, 64 at a time.
      const t0 = performance.now()
      const headers = { authorization: `Bearer ${api.ready.apiKey}`, 'content-type': 'application/json' }
      const body = JSON.stringify({ filename: 'seed.wav', contentType: 'audio/wav', fileSizeBytes: 1000 })
      for (let i = 0; i < notes; i += 64) await Promise.all(Array.from({ length: Math.min(64, notes - i) }, () => fetch(`${url}/v1/notes`, { method: 'POST', headers, body }).then((r) => r.arrayBuffer())))
      console.log(`scale layout (1 API process, 1 projections process, FerretDB read models through a counting proxy), seeded ${notes} notes through the API in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      await mixedLoad('scale layout on FerretDB', url, api.ready.apiKey!, api.child, d, () => proxy.requests())
    } finally {
      for (const c of children) c.kill('SIGTERM')
      await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((resolve) => c.once('exit', resolve)))))
      await proxy.close()
      rmSync(d, { recursive: true, force: true })
      await dropMongoDatabase(mongo, env.MONGO_DB)
    }
  }
  console.log(`end: ${machineLoad()}`)
}

const dir = mkdtempSync(join(tmpdir(), 'bench-api-'))
if (process.env.MIXED === '1') {
  try {
    await mixedMode()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  process.exit(0)
}
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
