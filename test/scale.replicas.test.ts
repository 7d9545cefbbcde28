// Two API processes behind one load balancer count against one limit: the counters live in the
// read-model store (MongoDB; FerretDB here, which `npm test` starts) when MONGO_URL is set. Before,
// each process counted in its own memory and two replicas granted twice the limit.
// MONGO_URL unset: nothing to run here; say so and pass.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { tempDir } from './support/tmp.ts'
import { startReplica, stopReplica, type Replica } from './support/apiReplicaProcess.ts'

const mongoUrl = process.env.MONGO_URL
/**
 * Two API processes behind one proxy (TRUST_PROXY=1) on one MongoDB database of their own: `a`
 * also runs the projections and sets the account up, `b` serves only. Stopped and dropped at teardown.
 */
async function twoReplicas(t: Test, mongoUrl: string, env: Record<string, string>) {
  const tmp = tempDir()
  const db = `test_replicas_${randomUUID().replace(/-/g, '').slice(0, 10)}`
  const shared = { DATA_DIR: tmp.dir, MONGO_URL: mongoUrl, MONGO_DB: db, TRUST_PROXY: '1', ...env }
  const a = await startReplica({ ...shared, ROLES: 'api,projections', SETUP: '1' })
  const b = await startReplica({ ...shared, ROLES: 'api' })
  t.teardown(async () => {
    await Promise.all([stopReplica(a), stopReplica(b)])
    const { dropMongoDatabase } = await import('../adapters/mongodb/documentStore.ts')
    await dropMongoDatabase(mongoUrl, db)
    await dropMongoDatabase(mongoUrl, `${db}_keys`)
    tmp.remove()
  })
  return { a, b }
}

if (!mongoUrl) {
  t.comment('MONGO_URL is not set: the replica tests need MongoDB (npm test starts FerretDB)')
} else {
  t.test('two API processes share one per-key limit, and one registration throttle per client address', async (t) => {
    const { a, b } = await twoReplicas(t, mongoUrl, { RATE_LIMIT_MAX: '6', RATE_LIMIT_WINDOW_SECONDS: '600' })

    // 12 requests alternating between the replicas with one key whose limit is 6.
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      const port = i % 2 === 0 ? a.port : b.port
      const r = await fetch(`http://127.0.0.1:${port}/v1/notes?limit=1`, { headers: { authorization: `Bearer ${a.apiKey}` } })
      statuses.push(r.status)
      if (r.status === 429) t.match(await r.json(), { error: 'rate_limit_exceeded' })
      else await r.arrayBuffer()
    }
    t.same(statuses.filter((s) => s === 200).length, 6, `the limit of 6 holds across both replicas (${statuses.join(' ')})`)
    t.same(statuses.slice(6), [429, 429, 429, 429, 429, 429])

    // OAuth client registration: 30 per client address per hour, counted by the handler. Behind
    // the proxy (TRUST_PROXY=1) the address is X-Forwarded-For's: one client through both replicas
    // is throttled after 30, another client behind the same proxy is not.
    const register = (port: number, ip: string) =>
      fetch(`http://127.0.0.1:${port}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify({ client_name: 'replica test', redirect_uris: ['https://client.example.org/cb'] }),
      }).then(async (r) => (await r.arrayBuffer(), r.status))
    const perIp: number[] = []
    for (let i = 0; i < 32; i++) perIp.push(await register(i % 2 === 0 ? a.port : b.port, '203.0.113.7'))
    t.equal(perIp.filter((s) => s === 429).length, 2, `one address: 30 registrations across both replicas (${perIp.join(' ')})`)
    t.same(perIp.slice(30), [429, 429])
    t.not(await register(b.port, '203.0.113.8'), 429, 'another client behind the same proxy is not throttled')
  })
}

if (mongoUrl) {
  // A per-operation limit (domain/limits.ts: speaker suggestions, 10 per hour per key) counts in
  // the same shared store. Before, each replica had its own ten: 12 calls alternating between two
  // replicas all passed the limit. The note does not exist: the limit is counted before the
  // handler, which then answers 404, so every call that passes the limit is a 404.
  t.test('two API processes share one per-operation limit', async (t) => {
    const { a, b } = await twoReplicas(t, mongoUrl, { RATE_LIMIT_MAX: '1000' })
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      const port = i % 2 === 0 ? a.port : b.port
      const r = await fetch(`http://127.0.0.1:${port}/v1/notes/${randomUUID()}/speakers/suggest`, { method: 'POST', headers: { authorization: `Bearer ${a.apiKey}` } })
      statuses.push(r.status)
      if (r.status === 429) t.match(await r.json(), { error: 'rate_limit_exceeded', retryAfter: Number })
      else await r.arrayBuffer()
    }
    t.same(statuses.slice(0, 10), Array(10).fill(404), `the first ten pass the limit (${statuses.join(' ')})`)
    t.same(statuses.slice(10), [429, 429], 'the 11th and 12th are refused, whichever replica gets them')
  })
}
