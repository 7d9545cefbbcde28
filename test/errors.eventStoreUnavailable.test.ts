// EventStoreDB deadlines (issue 13, finding 6) at the edges: a read that reaches the event store
// and times out answers the spec's 503 service_unavailable with Retry-After on REST and MCP,
// never a 500 (commands map it in the command handler; test/eventStore.esdbDeadlines.test.ts).
import t from 'tap'
import Fastify from 'fastify'
import { errorHandling } from '../api/http/errorHandling.ts'
import { toolError } from '../mcp/server.ts'
import { EventStoreTimeoutError } from '../ports/eventStore.ts'
import { DocumentStoreUnavailableError } from '../ports/documentStore.ts'

t.test('given a route whose event-store read times out, then 503 service_unavailable with Retry-After', async (t) => {
  const app = Fastify()
  await app.register(errorHandling)
  app.get('/x', async () => {
    throw new EventStoreTimeoutError('readStream(note-1)', 10_000)
  })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/x' })
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '1')
  t.match(res.json(), { error: 'service_unavailable', retryAfter: 1 })
})

t.test('given an MCP tool whose event-store read times out, then its error is service_unavailable', async (t) => {
  const logged: unknown[] = []
  const result = toolError(new EventStoreTimeoutError('readAll', 10_000), (e) => logged.push(e))
  t.match(JSON.parse((result.content[0] as { text: string }).text), { error: 'service_unavailable', retryAfter: 1 })
  t.same(logged, [], 'not logged as an internal failure')
})

// The read-model store (MongoDB, FerretDB) down: POST /v1/notes answered 500 internal_error for
// the whole outage in the fault suite (test/scale.faults.test.ts, its write load's refusals).
t.test('given a route whose document store does not answer, then 503 service_unavailable with Retry-After, on REST and MCP', async (t) => {
  const app = Fastify()
  await app.register(errorHandling)
  app.get('/x', async () => {
    throw new DocumentStoreUnavailableError('connect ECONNREFUSED 127.0.0.1:27017')
  })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/x' })
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '1')
  t.match(res.json(), { error: 'service_unavailable', retryAfter: 1 })
  t.notMatch(res.body, /27017/, 'no address of ours in the answer')
  const result = toolError(new DocumentStoreUnavailableError('connect ECONNREFUSED'), () => {})
  t.match(JSON.parse((result.content[0] as { text: string }).text), { error: 'service_unavailable', retryAfter: 1 })
})
