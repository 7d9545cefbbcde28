// Health and load shedding (issue 19, with the scale issue's health endpoints and issue 18's
// "say which engine build runs"): GET /healthz (alive, never shed), GET /readyz (event store
// reachable, each projection's position and lag, the speech engine's build and instruction set),
// and @fastify/under-pressure answering 503 service_unavailable with Retry-After while the event
// loop lags. Bodies in the spec's shape.
import t from 'tap'
import Fastify from 'fastify'
import { testService } from './support/service.ts'
import { loadShedding } from '../api/http/loadShedding.ts'
import { errorHandling } from '../api/http/errorHandling.ts'
import { READ_MODEL_PROJECTIONS } from '../app/projections.ts'

const block = (ms: number) => {
  const end = Date.now() + ms
  while (Date.now() < end);
}

/** Blocks the event loop, then asks at once, until the answer is shed (or the deadline passes). */
async function whileLagging<T extends { statusCode: number }>(blockMs: number, ask: () => Promise<T>, deadlineMs = 20_000): Promise<T> {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    block(blockMs)
    // Let the overdue timers run: the delay monitor's sample, then the plugin's reading of it.
    await new Promise((r) => setTimeout(r, 30))
    const r = await ask()
    if (r.statusCode === 503 || Date.now() > deadline) return r
  }
}

const TOKEN = 'operator-token-0123456789'
const operator = { authorization: `Bearer ${TOKEN}` }

/** /readyz as the operator sees it, once every projection has caught up (polled, with a deadline). */
async function caughtUp(s: Awaited<ReturnType<typeof testService>>) {
  const deadline = Date.now() + 20_000
  for (;;) {
    const r = await s.inject({ method: 'GET', url: '/readyz', headers: operator })
    if ((r.statusCode === 200 && r.json().projections.every((p: { behind: number }) => p.behind === 0)) || Date.now() > deadline) return r
    await new Promise((res) => setTimeout(res, 50))
  }
}

t.test('GET /healthz and GET /readyz with the operator token: every check', async (t) => {
  const s = await testService({ env: { HEALTH_TOKEN: TOKEN } })
  t.teardown(s.close)
  const alive = await s.inject({ method: 'GET', url: '/healthz' })
  t.equal(alive.statusCode, 200)
  t.same(Object.keys(alive.json()).sort(), ['status', 'uptimeSeconds', 'version'])
  t.equal(alive.json().status, 'ok')

  const a = await s.account('pro')
  await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: { filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: 1000 } })
  const ready = await caughtUp(s)
  t.equal(ready.statusCode, 200)
  const body = ready.json()
  t.same(Object.keys(body).sort(), ['blobStore', 'eventStore', 'forwarder', 'kafka', 'keyStore', 'projections', 'readModelStore', 'reasons', 'roles', 'speech', 'status', 'version'])
  t.equal(body.status, 'ready')
  t.same(body.reasons, [])
  for (const dep of ['eventStore', 'readModelStore', 'blobStore', 'keyStore']) t.same([body[dep].reachable, body[dep].error, typeof body[dep].latencyMs], [true, null, 'number'], `${dep} answers`)
  t.same([body.kafka, body.forwarder], [null, null], 'no forwarder in this process')
  t.same(body.projections.map((p: { name: string }) => p.name).sort(), READ_MODEL_PROJECTIONS.map((p) => p.name).sort(), 'every read model')
  for (const p of body.projections)
    t.same([p.behind, p.behindAtLeast, p.inThisProcess, typeof p.position, p.state, p.retries, p.lastError, p.checkpoint, p.stalledSeconds], [0, false, true, 'number', 'running', 0, null, 'present', null], `${p.name} caught up, its loop running`)
  const engine = s.services.ingest.engine
  t.same([body.speech.engine, body.speech.provider, body.speech.model], [engine.engine, engine.provider, engine.model])
  if (engine.status) t.equal(body.speech.summary, engine.status().summary, 'the start banner’s line: engine build, instruction set, model, threads')
  t.ok(body.speech.summary.length > 0)
  t.ok(['ready', 'preparing', 'unavailable', 'remote'].includes(body.speech.state))
})

t.test('GET /health and GET /readyz without the operator token: a status only, no positions (issue 26)', async (t) => {
  const s = await testService({ env: { HEALTH_TOKEN: TOKEN } })
  t.teardown(s.close)
  await caughtUp(s)
  const ready = await s.inject({ method: 'GET', url: '/readyz' })
  t.same([ready.statusCode, ready.json()], [200, { status: 'ready' }])
  const wrong = await s.inject({ method: 'GET', url: '/readyz', headers: { authorization: 'Bearer not-the-operator-token' } })
  t.same(wrong.json(), { status: 'ready' }, 'a wrong token sees no more')
  const health = await s.inject({ method: 'GET', url: '/health' })
  t.same(Object.keys(health.json()).sort(), ['status', 'version'])
  const detailed = await s.inject({ method: 'GET', url: '/health', headers: operator })
  t.ok(Array.isArray(detailed.json().projections), 'the operator sees the positions')

  // The log itself does not answer (readiness reads it raw: app/readiness.ts).
  const events = s.services.events as { readAllRaw: (...a: unknown[]) => Promise<unknown> }
  const readAllRaw = events.readAllRaw
  events.readAllRaw = async () => {
    throw new Error('connection refused')
  }
  t.teardown(() => void (events.readAllRaw = readAllRaw))
  const down = await s.inject({ method: 'GET', url: '/readyz' })
  t.equal(down.statusCode, 503)
  t.same(down.json(), { error: 'service_unavailable', message: 'Not ready.', retryAfter: 10, status: 'not_ready' }, 'not ready, and nothing about why')
})

t.test('GET /readyz while the event store does not answer: 503 service_unavailable naming the event store', async (t) => {
  const s = await testService({ env: { HEALTH_TOKEN: TOKEN } })
  t.teardown(s.close)
  // The log itself does not answer (readiness reads it raw: app/readiness.ts).
  const events = s.services.events as { readAllRaw: (...a: unknown[]) => Promise<unknown> }
  const readAllRaw = events.readAllRaw
  events.readAllRaw = async () => {
    throw new Error('connection refused')
  }
  t.teardown(() => void (events.readAllRaw = readAllRaw))
  const r = await s.inject({ method: 'GET', url: '/readyz', headers: operator })
  t.equal(r.statusCode, 503)
  t.equal(r.headers['retry-after'], '10')
  const body = r.json()
  t.same([body.error, body.retryAfter, body.status, body.eventStore.reachable, body.eventStore.error, body.readModelStore.reachable], ['service_unavailable', 10, 'not_ready', false, 'connection refused', true])
  t.match(body.message, /event store: does not answer/)
  t.notMatch(body.message, /read-model store/, 'the read-model store is not blamed')
  t.ok(body.speech.summary, 'still says which engine')
  t.equal((await s.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'alive all the same')
})

t.test('GET /readyz while the read-model store does not answer: 503 naming the read-model store, not the event store (issue 31)', async (t) => {
  const s = await testService({ env: { HEALTH_TOKEN: TOKEN } })
  t.teardown(s.close)
  await caughtUp(s)
  const docs = s.services.docs as { collection: (...a: unknown[]) => unknown }
  const collection = docs.collection
  docs.collection = () => {
    throw new Error('connect ECONNREFUSED 127.0.0.1:4210')
  }
  t.teardown(() => void (docs.collection = collection))
  const r = await s.inject({ method: 'GET', url: '/readyz', headers: operator })
  t.equal(r.statusCode, 503)
  const body = r.json()
  t.same([body.eventStore.reachable, body.readModelStore.reachable, body.readModelStore.error], [true, false, 'connect ECONNREFUSED 127.0.0.1:4210'])
  t.match(body.message, /read-model store: does not answer \(connect ECONNREFUSED/)
  t.notMatch(body.message, /event store/)
  for (const p of body.projections) t.equal(p.checkpoint, 'unknown')
})

t.test('GET /readyz when a read model lost its checkpoint, or trails the log past READY_MAX_LAG: not ready, naming it', async (t) => {
  const s = await testService({ env: { HEALTH_TOKEN: TOKEN, READY_MAX_LAG: '3' } })
  t.teardown(s.close)
  await caughtUp(s)
  // The notes projection stops (as if its process died); four notes are created meanwhile.
  await s.services.projections.find((p) => p.name === 'notes')!.stop()
  const a = await s.account('pro')
  for (let i = 0; i < 4; i++) await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: { filename: `n${i}.wav`, contentType: 'audio/wav' } })
  const behind = await s.inject({ method: 'GET', url: '/readyz', headers: operator })
  t.equal(behind.statusCode, 503)
  t.match(behind.json().message, /projection notes: \d+ events behind the log \(READY_MAX_LAG 3\)/)
  t.match(behind.json().projections.find((p: { name: string }) => p.name === 'notes'), { state: 'stopped', checkpoint: 'present' })

  await s.services.docs.collection('_checkpoints').deleteOne({ _id: 'folders' })
  const lost = await s.inject({ method: 'GET', url: '/readyz', headers: operator })
  t.match(lost.json().message, /projection folders: no checkpoint in the read-model store/)
  t.match(lost.json().projections.find((p: { name: string }) => p.name === 'folders'), { checkpoint: 'missing' })
})

t.test('load shedding: 503 with Retry-After and the spec body while the event loop lags; /healthz exempt', async (t) => {
  const app = Fastify()
  await app.register(errorHandling)
  await app.register(loadShedding, { maxEventLoopDelayMs: 50, retryAfterSeconds: 7, sampleIntervalMs: 200 })
  app.get('/work', async () => ({ done: true }))
  app.get('/healthz', async () => ({ status: 'ok' }))
  t.teardown(() => app.close())
  await app.ready()
  t.equal((await app.inject({ method: 'GET', url: '/work' })).statusCode, 200, 'not lagging: served')
  const shed = await whileLagging(500, () => app.inject({ method: 'GET', url: '/work' }))
  t.equal(shed.statusCode, 503)
  t.equal(shed.headers['retry-after'], '7')
  t.same(Object.keys(shed.json()).sort(), ['error', 'message', 'retryAfter'])
  t.same([shed.json().error, shed.json().retryAfter], ['service_unavailable', 7])
  t.match(shed.json().message, /event loop (lags \d+ ms|is blocked)/)
  const alive = await app.inject({ method: 'GET', url: '/healthz' })
  t.equal(alive.statusCode, 200, 'a busy process is alive')
})

t.test('the REST host sheds before authentication (MAX_EVENT_LOOP_DELAY_MS)', async (t) => {
  const s = await testService({ env: { MAX_EVENT_LOOP_DELAY_MS: '50', LOAD_SHED_RETRY_AFTER_SECONDS: '3' } })
  t.teardown(s.close)
  const shed = await whileLagging(1500, () => s.inject({ method: 'GET', url: '/v1/notes' }))
  t.same([shed.statusCode, shed.headers['retry-after'], shed.json().error, shed.json().retryAfter], [503, '3', 'service_unavailable', 3])
})
