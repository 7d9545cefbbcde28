// What metrics and traces cost on the hot path: POST /v1/notes (upload shape, bench/api.ts's
// create) with autocannon against the service in a child process (bench/api-server.ts, embedded
// default, api and projections), in three variants, interleaved round by round so the machine's
// drift spreads over all of them:
//   off      no METRICS_TOKEN / METRICS_PORT, no OTEL endpoint: the instruments are no-ops (baseline)
//   metrics  METRICS_TOKEN set: every request, append and projection batch recorded into
//            prom-client, and GET /metrics scraped every second during the run
//   traces   metrics as above, and OTEL_EXPORTER_OTLP_ENDPOINT at a local sink that accepts the
//            OTLP/HTTP exports: spans for every request, append, projection and batch export
// Besides requests/s, each run reports the service process's CPU time (user + system) per request
// answered: on a machine shared with other work, that cost moves far less than the rate does.
//   npx tsx bench/observability.ts        knobs: ROUNDS (3), SECONDS (10), CONNECTIONS (16), NOTES (1000)
import autocannon from 'autocannon'
import { fork, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cpuBreakdown, cpuSnapshot, envInt, machine, machineLoad, table } from './lib.ts'

const ROUNDS = envInt('ROUNDS', 3)
const SECONDS = envInt('SECONDS', 10)
const CONNECTIONS = envInt('CONNECTIONS', 16)
const NOTES = envInt('NOTES', 1000)
const TOKEN = 'bench-metrics-token'
const serverScript = fileURLToPath(new URL('./api-server.ts', import.meta.url))

// The OTLP collector stand-in: takes every export, counts it, answers 200 as a collector does.
let exports = 0
let exportedBytes = 0
const sink = createServer((req, res) => {
  req.on('data', (d: Buffer) => (exportedBytes += d.length))
  req.on('end', () => (exports++, res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()))
})
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r))
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`

type Variant = 'off' | 'metrics' | 'traces'
const ENV: Record<Variant, Record<string, string>> = {
  off: {},
  metrics: { METRICS_TOKEN: TOKEN },
  traces: { METRICS_TOKEN: TOKEN, OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_SERVICE_NAME: 'notes-bench' },
}

function start(env: Record<string, string>): Promise<{ child: ChildProcess; port: number; apiKey: string }> {
  const { METRICS_TOKEN: _t, METRICS_PORT: _p, OTEL_EXPORTER_OTLP_ENDPOINT: _o, ...base } = process.env
  const child = fork(serverScript, ['service'], { execArgv: ['--import', 'tsx'], env: { ...base, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ...(m as { port: number; apiKey: string }) }))
    child.once('exit', (code) => reject(new Error(`the service exited with ${code}`)))
  })
}

interface Run {
  rps: number
  p50: number
  p99: number
  errors: number
  scrapes: number
  /** The service process's CPU time per request answered, ms. */
  cpuMs: number
}

async function run(variant: Variant): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-observability-'))
  const svc = await start({ ...ENV[variant], DATA_DIR: dir, NOTES: String(NOTES), MCP_PORT: '0' })
  try {
    const url = `http://127.0.0.1:${svc.port}/v1/notes`
    const opts = { url, method: 'POST' as const, connections: CONNECTIONS, headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ filename: 'bench.wav', contentType: 'audio/wav', fileSizeBytes: 1000 }) }
    await autocannon({ ...opts, duration: 2 })
    // As Prometheus would, once a second (15 s is its default: this is the heavier case).
    let scrapes = 0
    const scraper =
      variant === 'off'
        ? null
        : setInterval(() => {
            void fetch(`http://127.0.0.1:${svc.port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).then(async (r) => {
              await r.arrayBuffer()
              if (r.status === 200) scrapes++
            }, () => {})
          }, 1000)
    let r: autocannon.Result
    const before = cpuSnapshot()
    try {
      r = await autocannon({ ...opts, duration: SECONDS })
    } finally {
      if (scraper) clearInterval(scraper)
    }
    const [service] = cpuBreakdown(before, cpuSnapshot(), [['service', (pid) => pid === svc.child.pid]])
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx, scrapes, cpuMs: service!.ms / Math.max(1, r.requests.total) }
  } finally {
    svc.child.kill('SIGTERM')
    await new Promise((r) => (svc.child.exitCode !== null ? r(null) : svc.child.once('exit', r)))
    rmSync(dir, { recursive: true, force: true })
  }
}

console.log(`observability cost: POST /v1/notes, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds of off / metrics / traces; ${machine()}`)
console.log(`at start: ${machineLoad()}`)
const runs: Record<Variant, Run[]> = { off: [], metrics: [], traces: [] }
for (let round = 1; round <= ROUNDS; round++) {
  for (const v of ['off', 'metrics', 'traces'] as const) {
    const r = await run(v)
    runs[v].push(r)
    console.log(`round ${round} ${v.padEnd(8)} ${Math.round(r.rps).toString().padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  errors ${r.errors}  service CPU ${r.cpuMs.toFixed(2)} ms/request${v === 'off' ? '' : `  scrapes ${r.scrapes}`}`)
  }
}
sink.close()
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
const base = mean(runs.off.map((r) => r.rps))
const baseCpu = mean(runs.off.map((r) => r.cpuMs))
table(
  ['variant', 'req/s (mean)', 'per round', 'vs off', 'CPU ms/request (mean)', 'vs off', 'p50 ms (mean)', 'p99 ms (mean)', 'errors'],
  (['off', 'metrics', 'traces'] as const).map((v) => [
    v,
    Math.round(mean(runs[v].map((r) => r.rps))),
    runs[v].map((r) => Math.round(r.rps)).join(' / '),
    `${((mean(runs[v].map((r) => r.rps)) / base) * 100).toFixed(1)} %`,
    mean(runs[v].map((r) => r.cpuMs)).toFixed(3),
    `${((mean(runs[v].map((r) => r.cpuMs)) / baseCpu) * 100).toFixed(1)} %`,
    mean(runs[v].map((r) => r.p50)).toFixed(1),
    mean(runs[v].map((r) => r.p99)).toFixed(1),
    runs[v].reduce((a, r) => a + r.errors, 0),
  ]),
)
console.log(`OTLP exports received by the sink: ${exports} (${(exportedBytes / 1e6).toFixed(1)} MB)`)
console.log(`at end: ${machineLoad()}`)
process.exit(0)
