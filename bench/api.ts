// REST throughput and latency, each next to a bare fastify route in the same run:
//   GET /v1/notes?limit=20 with NOTES notes in the read model (default 100,000) vs a bare GET
//   route returning a payload of the same size; POST /v1/notes (upload shape) vs a bare POST
//   route that parses the same JSON body and returns a same-sized answer.
// The server runs in a child process (so autocannon does not share its event loop); both use the
// embedded default (SQLite events, embedded read models) in a temp directory.
//   npx tsx bench/api.ts            knobs: NOTES, CONNECTIONS (64), SECONDS (10), PROFILE (a directory)
import autocannon from 'autocannon'
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

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

function startServer(mode: 'service' | 'bare', env: Record<string, string>): Promise<{ child: ChildProcess; ready: Ready }> {
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

const dir = mkdtempSync(join(tmpdir(), 'bench-api-'))
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
