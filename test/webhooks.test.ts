// Webhooks (spec part 6, our extension routes): Power plan only; the secret is shown once; when a
// note finishes, every endpoint gets a POST signed the Standard Webhooks way, retried with backoff
// until it answers 2xx, and a receiver that verifies the signatures sees one logical delivery per
// event whatever the retries; during a rotation both secrets sign.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { createImport, dialogue, startAsrServer, waitForNote, json } from './support/pipeline.ts'
import { verify } from '../domain/webhooks/signing.ts'
import { WebhookPayload } from '../contract/webhooks.ts'

const tmp = tempDir('webhooks-')
t.teardown(tmp.remove)
const mp3Bytes = await readFile(await dialogue(tmp.dir))
const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)

// The receiver: answers 500 to the first tries of every message, then 200; records every call.
const received: { id: string; timestamp: string; signature: string; body: string; status: number }[] = []
let failFirst = 2
const triesOf = new Map<string, number>()
const web = await startHttpServer({
  '/talk.mp3': { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } },
  '/gone.mp3': { status: 404 },
  '/hook': (req, body) => {
    const id = String(req.headers['webhook-id'])
    const n = (triesOf.get(id) ?? 0) + 1
    triesOf.set(id, n)
    const status = n <= failFirst ? 500 : 200
    received.push({ id, timestamp: String(req.headers['webhook-timestamp']), signature: String(req.headers['webhook-signature']), body: body.toString('utf8'), status })
    return { status, body: 'ok' }
  },
})
t.teardown(web.close)

const s = await testService({
  workers: true,
  env: {
    IMPORT_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    ASR_BASE_URL: asr.baseUrl,
    JOB_POLL_MS: '20',
    JOB_PROGRESS_INTERVAL_MS: '20',
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_RETRY_DELAYS_SECONDS: '0.05,0.1,0.1',
  },
})
t.teardown(s.close)

const until = async (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

t.test('webhook endpoints are a Power plan feature', async (t) => {
  const pro = await s.account('pro')
  const r = await s.inject({ method: 'POST', url: '/v1/webhooks', headers: { ...pro.headers, ...json }, payload: JSON.stringify({ url: web.url('/hook') }) })
  t.equal(r.statusCode, 403)
  t.match(r.json(), { error: 'tier_upgrade_required', currentTier: 'pro', requiredTier: 'power' })
  t.equal((await s.inject({ method: 'GET', url: '/v1/webhooks', headers: pro.headers })).statusCode, 403)
})

t.test('management: the secret is shown once, lists never show it, bad or private URLs are refused, deletion', async (t) => {
  const a = await s.account('power')
  const post = (body: unknown) => s.inject({ method: 'POST', url: '/v1/webhooks', headers: { ...a.headers, ...json }, payload: JSON.stringify(body) })
  for (const bad of [{ url: 'ftp://x.example/hook' }, { url: 'not a url' }, { url: 'http://10.1.2.3/hook' }, { url: 'http://intranet.example.org/hook' }, { url: web.url('/hook'), events: ['note.deleted'] }, {}]) {
    const r = await post(bad)
    t.equal(r.statusCode, 400, JSON.stringify(bad))
    t.equal(r.json().error, 'invalid_request')
  }
  const r = await post({ url: web.url('/hook'), events: ['note.failed'], description: 'failures only' })
  t.equal(r.statusCode, 201)
  t.match(r.json(), { id: /^[0-9a-f-]{36}$/, url: web.url('/hook'), events: ['note.failed'], description: 'failures only', secret: /^whsec_[A-Za-z0-9+/=]{32}$/ })
  const list = await s.inject({ method: 'GET', url: '/v1/webhooks', headers: a.headers })
  t.same(list.json().webhooks.map((w: any) => w.id), [r.json().id])
  t.notMatch(list.body, /whsec_/, 'the secret is never listed')
  const stored = JSON.stringify(await s.services.events.readStream(`webhook-${r.json().id}`))
  t.notOk(stored.includes(r.json().secret.slice(6)), 'the event store holds the secret sealed, never in clear')
  const other = await s.account('power')
  t.equal((await s.inject({ method: 'DELETE', url: `/v1/webhooks/${r.json().id}`, headers: other.headers })).statusCode, 404, "someone else's endpoint is not found")
  t.equal((await s.inject({ method: 'DELETE', url: `/v1/webhooks/${r.json().id}`, headers: a.headers })).statusCode, 200)
  t.same((await s.inject({ method: 'GET', url: '/v1/webhooks', headers: a.headers })).json().webhooks, [])
  // Gone for every route under it (schemathesis' ST301 found its deliveries still answering 200).
  const after = await s.inject({ method: 'GET', url: `/v1/webhooks/${r.json().id}/deliveries`, headers: a.headers })
  t.equal(after.statusCode, 404, 'a deleted endpoint has no deliveries to show')
  t.equal(after.json().error, 'not_found')
  const contract = (await s.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  t.ok(contract.paths['/v1/webhooks'], 'the routes are in the contract')
  t.match(contract.webhooks['note.ready'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/WebhookPayload' }, 'the payload is in the contract')
})

t.test('a finished note is delivered once, signed, despite forced retries; a failed note too', async (t) => {
  const a = await s.account('power')
  const created = (await s.inject({ method: 'POST', url: '/v1/webhooks', headers: { ...a.headers, ...json }, payload: JSON.stringify({ url: web.url('/hook') }) })).json()
  const secret = created.secret as string
  const start = received.length

  const ready = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3'), title: 'Weekly' })
  t.match((await waitForNote(s, a.headers, ready)).note, { status: 'ready' })
  const failed = await createImport(s, a.headers, { audioUrl: web.url('/gone.mp3') })
  t.match((await waitForNote(s, a.headers, failed)).note, { status: 'failed', errorCode: 'source_not_found' })

  await until('both deliveries', () => received.slice(start).filter((r) => r.status === 200).length >= 2)
  const calls = received.slice(start)
  const now = Math.floor(Date.now() / 1000)
  for (const c of calls) t.ok(verify(secret, c, c.body, now), `signature of ${c.id} verifies`)
  t.notOk(verify('whsec_' + Buffer.alloc(24, 1).toString('base64'), calls[0]!, calls[0]!.body, now), 'another secret does not verify')
  t.notOk(verify(secret, calls[0]!, calls[0]!.body + ' ', now), 'a changed body does not verify')

  const logical = new Map<string, typeof calls>()
  for (const c of calls) logical.set(c.id, [...(logical.get(c.id) ?? []), c])
  t.equal(logical.size, 2, 'two events, two logical deliveries')
  for (const [id, tries] of logical) {
    t.match(id, /^msg_[0-9a-f-]{36}$/)
    t.same(tries.map((x) => x.status), [500, 500, 200], 'two forced failures, then delivered; never again after the 200')
    t.equal(new Set(tries.map((x) => x.body)).size, 1, 'every try carries the same payload')
  }
  const payloads = [...logical.values()].map((tries) => WebhookPayload.parse(JSON.parse(tries[0]!.body)))
  const byNote = Object.fromEntries(payloads.map((p) => [p.data.noteId, p]))
  t.match(byNote[ready], { type: 'note.ready', data: { status: 'ready', errorCode: null, errorMessage: null, title: 'Weekly', language: 'en', sourceType: 'url', origin: 'audio' } })
  t.ok(byNote[ready]!.data.durationSeconds! > 0)
  t.match(byNote[failed], { type: 'note.failed', data: { status: 'failed', errorCode: 'source_not_found', errorMessage: /404/ } }, 'the failure says what went wrong, in words')

  // Nothing more arrives later: one logical delivery each.
  await new Promise((r) => setTimeout(r, 300))
  t.equal(received.length - start, calls.length)

  const log = (await s.inject({ method: 'GET', url: `/v1/webhooks/${created.id}/deliveries`, headers: a.headers })).json().deliveries
  t.equal(log.length, 2)
  t.ok(log.every((d: any) => d.status === 'delivered' && d.attempts === 3 && d.lastStatusCode === 200))
  const stream = (await s.services.events.readAll({ filter: { categories: ['webhookdelivery'] } })).filter((e) => (e.data as any).endpointId === created.id || log.some((d: any) => e.streamName === `webhookdelivery-${d.id}`))
  t.equal(stream.filter((e) => e.type === 'WebhookDeliveryAttempted').length, 6, 'every try is in the delivery log')
})

t.test('an endpoint that never answers 2xx is retried per the schedule, then the delivery is failed', async (t) => {
  failFirst = 100
  const a = await s.account('power')
  const created = (await s.inject({ method: 'POST', url: '/v1/webhooks', headers: { ...a.headers, ...json }, payload: JSON.stringify({ url: web.url('/hook'), events: ['note.failed'] }) })).json()
  const note = await createImport(s, a.headers, { audioUrl: web.url('/gone.mp3') })
  await waitForNote(s, a.headers, note)
  const deliveries = async () => (await s.inject({ method: 'GET', url: `/v1/webhooks/${created.id}/deliveries`, headers: a.headers })).json().deliveries
  await until('the delivery to give up', async () => (await deliveries())[0]?.status === 'failed')
  t.match((await deliveries())[0], { status: 'failed', attempts: 4, lastStatusCode: 500, nextAttemptAt: null })
  failFirst = 0
})

t.test('during a secret rotation both secrets sign', async (t) => {
  failFirst = 0
  const a = await s.account('power')
  const created = (await s.inject({ method: 'POST', url: '/v1/webhooks', headers: { ...a.headers, ...json }, payload: JSON.stringify({ url: web.url('/hook') }) })).json()
  const rotated = await s.inject({ method: 'POST', url: `/v1/webhooks/${created.id}/rotate`, headers: a.headers })
  t.equal(rotated.statusCode, 200)
  t.match(rotated.json(), { id: created.id, secret: /^whsec_/, previousSecretExpiresAt: /^\d{4}-/ })
  t.not(rotated.json().secret, created.secret)
  const start = received.length
  const note = await createImport(s, a.headers, { audioUrl: web.url('/gone.mp3') })
  await waitForNote(s, a.headers, note)
  await until('the delivery', () => received.length > start)
  const call = received[start]!
  t.equal(call.signature.split(' ').length, 2, 'two signatures')
  const now = Math.floor(Date.now() / 1000)
  t.ok(verify(created.secret, call, call.body, now), 'the old secret verifies')
  t.ok(verify(rotated.json().secret, call, call.body, now), 'the new secret verifies')
})
