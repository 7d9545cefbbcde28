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

t.test('GET /healthz and GET /readyz', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const alive = await s.inject({ method: 'GET', url: '/healthz' })
  t.equal(alive.statusCode, 200)
  t.same(Object.keys(alive.json()).sort(), ['status', 'uptimeSeconds', 'version'])
  t.equal(alive.json().status, 'ok')

  const a = await s.account('pro')
  await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: { filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: 1000 } })
  const deadline = Date.now() + 15_000
  let ready = await s.inject({ method: 'GET', url: '/readyz' })
  while (ready.json().projections?.some((p: { behind: number }) => p.behind > 0) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50))
    ready = await s.inject({ method: 'GET', url: '/readyz' })
  }
  t.equal(ready.statusCode, 200)
  const body = ready.json()
  t.same(Object.keys(body).sort(), ['eventStore', 'projections', 'speech', 'status', 'version'])
  t.equal(body.status, 'ready')
  t.same([body.eventStore.reachable, body.eventStore.error, typeof body.eventStore.latencyMs], [true, null, 'number'])
  t.same(body.projections.map((p: { name: string }) => p.name).sort(), READ_MODEL_PROJECTIONS.map((p) => p.name).sort(), 'every read model')
  for (const p of body.projections) t.same([p.behind, p.behindAtLeast, p.inThisProcess, typeof p.position, p.state, p.retries, p.lastError], [0, false, true, 'number', 'running', 0, null], `${p.name} caught up, its loop running`)
  const engine = s.services.ingest.engine
  t.same([body.speech.engine, body.speech.provider, body.speech.model], [engine.engine, engine.provider, engine.model])
  if (engine.status) t.equal(body.speech.summary, engine.status().summary, 'the start banner’s line: engine build, instruction set, model, threads')
  t.ok(body.speech.summary.length > 0)
  t.ok(['ready', 'preparing', 'unavailable', 'remote'].includes(body.speech.state))
})

t.test('GET /readyz while the event store does not answer: 503 service_unavailable with Retry-After', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const events = s.services.events as { readAll: (...a: unknown[]) => Promise<unknown> }
  const readAll = events.readAll
  events.readAll = async () => {
    throw new Error('connection refused')
  }
  t.teardown(() => void (events.readAll = readAll))
  const r = await s.inject({ method: 'GET', url: '/readyz' })
  t.equal(r.statusCode, 503)
  t.equal(r.headers['retry-after'], '10')
  const body = r.json()
  t.same([body.error, body.retryAfter, body.status, body.eventStore.reachable, body.eventStore.error], ['service_unavailable', 10, 'not_ready', false, 'connection refused'])
  t.match(body.message, /event store/)
  t.ok(body.speech.summary, 'still says which engine')
  t.equal((await s.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'alive all the same')
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
