// A Prometheus scrape of each role (issue 30): the API, the projections, the workers and the
// Kafka forwarder each run in a process of their own on one data directory, as compose runs
// them, and each one's GET /metrics shows what that process measures. The API's REST host needs
// METRICS_TOKEN; every role also serves it on its operator listener (METRICS_PORT).
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tempDir } from './support/tmp.ts'
import { pollUntil } from './support/pollUntil.ts'
import { embeddedEnv } from './support/embeddedEnv.ts'

const TOKEN = 'scrape-token-for-tests'

interface Role {
  metricsUrl: string
  baseUrl: string | null
  apiKey: string | null
  stop(): Promise<void>
}

/** Starts test/support/metricsRoleMain.ts with `env`; stopped by the test's teardown at the latest. */
async function startRole(t: Test, env: NodeJS.ProcessEnv): Promise<Role> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/metricsRoleMain.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr!.on('data', (d) => (err += d))
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  t.teardown(stop)
  let out = ''
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d
      const l = out.split('\n').find((x) => x.startsWith('{"ready":true'))
      if (l) resolve(l)
    })
    child.once('exit', () => reject(new Error(`${env.ROLES} exited before it was ready: ${err.slice(-2000)}`)))
  })
  return { ...(JSON.parse(line) as Omit<Role, 'stop'>), stop }
}

async function scrape(role: Role): Promise<string> {
  const r = await fetch(`${role.metricsUrl}/metrics`)
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status} ${await r.text()}`)
  if (!/^text\/plain; version=0\.0\.4/.test(r.headers.get('content-type') ?? '')) throw new Error(`content type ${r.headers.get('content-type')}`)
  return r.text()
}

/** The value of the first sample of `name` carrying `labels` (in any order, among others); undefined when none does. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m || m[1] !== name) continue
    const has = new Map([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => has.get(k) === v)) return Number(m[3])
  }
  return undefined
}

/** Every sample line of a metric (any labels). */
const samples = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(name + '{') || l.startsWith(name + ' '))

t.test('given the API, projections, workers and forwarder as separate processes, when Prometheus scrapes each, then each shows its own metrics', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  // The link a note imports: its host answers 404, so the worker's attempt fails with an errorCode.
  const host: Server = createServer((_req, res) => res.writeHead(404).end('gone'))
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r))
  t.teardown(() => host.close())
  const audioUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/episode.mp3`
  const env = (roles: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    ...embeddedEnv(),
    DATA_DIR: tmp.dir,
    PORT: '0',
    MCP_PORT: '0',
    ASR_BASE_URL: 'http://127.0.0.1:9/v1',
    LOG_LEVEL: 'silent',
    IMPORT_ALLOW_HOSTS: '127.0.0.1',
    ROLES: roles,
    METRICS_PORT: '0',
    METRICS_HOST: '127.0.0.1',
    JOB_POLL_MS: '50',
    ...extra,
  })

  // The read models first: the API's start (the demo library) waits for them.
  const projections = await startRole(t, env('projections'))
  const api = await startRole(t, env('api', { METRICS_TOKEN: TOKEN }))

  await t.test('api', async (t) => {
    const auth = { authorization: `Bearer ${api.apiKey}` }
    const created = await fetch(`${api.baseUrl}/v1/notes`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ audioUrl }) })
    t.equal(created.status, 202, 'the import is accepted')
    // On the embedded stores another process's read models are not this one's: a note id the API
    // has not seen answers 404, under the route's pattern.
    t.equal((await fetch(`${api.baseUrl}/v1/notes/${randomUUID()}`, { headers: auth })).status, 404)

    const anonymous = await fetch(`${api.baseUrl}/metrics`)
    t.equal(anonymous.status, 401, 'the REST host shows metrics to no one without the token')
    t.equal(((await anonymous.json()) as { error: string }).error, 'invalid_api_key')
    t.equal((await fetch(`${api.baseUrl}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 401)
    const viaToken = await fetch(`${api.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    t.equal(viaToken.status, 200)
    const text = await viaToken.text()
    t.ok((sample(text, 'notes_http_requests_total', { route: '/v1/notes', method: 'POST', status: '202', service: 'notes-api' }) ?? 0) >= 1, 'requests by route, method and status')
    t.ok((sample(text, 'notes_http_requests_total', { route: '/v1/notes/:id', method: 'GET', status: '404', service: 'notes-api' }) ?? 0) >= 1, 'a route with a parameter counts under its pattern, not its path')
    t.ok(samples(text, 'notes_http_request_duration_seconds_bucket').some((l) => l.includes('route="/v1/notes"') && l.includes('le="0.5"')), 'latency histogram by route')
    t.ok((sample(text, 'notes_event_store_duration_seconds_count', { operation: 'append', service: 'notes-api' }) ?? 0) >= 1, 'event-store append latency')
    t.ok((sample(text, 'notes_event_store_duration_seconds_count', { operation: 'readStream', service: 'notes-api' }) ?? 0) >= 1, 'event-store read latency')
    t.ok(samples(text, 'notes_credit_operations_total').some((l) => /kind="Credits\w+"/.test(l)), 'credit operations by kind')
    t.equal(samples(text, 'notes_process_resident_memory_bytes').length, 1, 'process metrics')
    const listener = await scrape(api)
    t.ok(samples(listener, 'notes_http_requests_total').length >= 1, 'the operator listener serves the same metrics without a token')
    t.equal((await fetch(`${api.metricsUrl}/other`)).status, 404)
  })

  await t.test('projections', async (t) => {
    const text = await pollUntil(
      'every projection caught up',
      async () => {
        const s = await scrape(projections)
        const behind = samples(s, 'notes_projection_behind_events')
        return behind.length >= 5 && behind.every((l) => l.endsWith(' 0')) && (sample(s, 'notes_projection_events_total', { projection: 'transcription-jobs', service: 'notes-projections' }) ?? 0) > 0 ? s : null
      },
      60_000,
    )
    t.ok((sample(text, 'notes_projection_position', { projection: 'notes', service: 'notes-projections' }) ?? -1) > 0, 'position of the notes projection')
    t.equal(sample(text, 'notes_projection_lag_seconds', { projection: 'notes', service: 'notes-projections' }), 0, 'nothing left to apply: no lag')
    t.equal(sample(text, 'notes_projection_up', { projection: 'notes', state: 'running', service: 'notes-projections' }), 1)
    t.match(text, /# TYPE notes_projection_errors_total counter/)
    t.equal(samples(text, 'notes_http_requests_total').length, 0, 'a projections process serves no API')
  })

  await t.test('workers', async (t) => {
    const workers = await startRole(t, env('workers'))
    const first = await scrape(workers)
    const depth = samples(first, 'notes_transcription_queue_depth').map((l) => Number(l.split(' ').pop()))
    t.equal(depth.length, 3, 'queue depth by status')
    t.ok(depth.reduce((a, b) => a + b, 0) >= 1, `the imported note's job is in the queue (${depth.join(', ')})`)
    t.equal(samples(first, 'notes_transcription_oldest_job_age_seconds').length, 1, 'age of the oldest waiting job')
    // The link answers 404: the attempt fails, and counts under its errorCode.
    const text = await pollUntil('a job outcome', async () => {
      const s = await scrape(workers)
      return samples(s, 'notes_transcription_jobs_total').length > 0 ? s : null
    }, 60_000)
    const outcome = samples(text, 'notes_transcription_jobs_total')[0]!
    t.match(outcome, /outcome="[a-z_]+"/, `job outcome by errorCode: ${outcome}`)
    t.notMatch(outcome, /outcome="succeeded"/)
    for (const name of ['notes_speech_real_time_factor', 'notes_webhook_deliveries_total']) t.match(text, new RegExp(`# TYPE ${name} `), `${name} is declared`)
    t.equal(samples(text, 'notes_projection_position').length, 0, 'a workers process runs no read-model projection')
    await workers.stop()
  })

  await t.test('forwarder', async (t) => {
    const brokers = process.env.KAFKA_BROKERS
    if (!brokers) {
      t.comment('KAFKA_BROKERS is not set: the forwarder role needs Kafka (npm test starts it)')
      return
    }
    const forwarder = await startRole(t, env('forwarder', { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: `metrics-${Date.now()}.` }))
    const text = await pollUntil(
      'the forwarder caught up',
      async () => {
        const s = await scrape(forwarder)
        return sample(s, 'notes_projection_behind_events', { projection: 'analytics-forwarder', service: 'notes-forwarder' }) === 0 ? s : null
      },
      60_000,
    )
    t.ok((sample(text, 'notes_kafka_messages_published_total', { service: 'notes-forwarder' }) ?? 0) >= 1, 'messages the broker acknowledged')
    t.equal(sample(text, 'notes_projection_lag_seconds', { projection: 'analytics-forwarder', service: 'notes-forwarder' }), 0, 'forwarder lag')
    t.match(text, /# TYPE notes_kafka_publish_failures_total counter/)
    await forwarder.stop()
  })
})
