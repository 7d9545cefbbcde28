// The web app's endpoints under /app/api (issue 29), over HTTP: the REST operations a person does
// in the browser are the REST route definitions themselves mounted under the session (same
// schemas, handlers and prices), with the session's rules (CSRF on every change, a charged GET
// refused when another site starts it), the REST API's Idempotency-Key and operation limits; the
// reference tables a page shows before acting (the contract's prices, the shared error advice,
// also MCP's); and the CSP naming the blob store where a browser PUTs an upload.
import t from 'tap'
import { testService } from './support/service.ts'
import { signedIn } from './support/dashboard.ts'
import { wavBytes } from './support/media.ts'
import { readyNote, transcriptOf } from './support/transcripts.ts'
import { toJSONSchema, type ZodType } from 'zod'
import { REST_ON_DASHBOARD, dashboardRoutes } from '../api/dashboard/routes.ts'
import { featureRoutes } from '../api/routes/index.ts'
import { toolError } from '../mcp/server.ts'
import { DomainError } from '../domain/errors.ts'
import { PRICES } from '../domain/credits/prices.ts'
import { NOTE_ERROR_CODES } from '../domain/notes/transcriptionJob.ts'
import { REFUSAL_ADVICE, noteFailureAdvice } from '../domain/advice.ts'
import { OPERATION_LIMITS } from '../domain/limits.ts'

const s = await testService()
t.teardown(s.close)

const lines = transcriptOf(
  [
    ['A', 0, 4000, 'Good morning, my name is Maria and welcome to the planning meeting.'],
    ['B', 4500, 8000, 'Thank you. The budget review is finished.'],
  ],
  { language: 'en' },
)

t.test('every REST operation on the dashboard is the REST route itself: same path, schemas, errors and price', async (t) => {
  const rest = new Map(featureRoutes(s.services).map((r) => [r.operationId, r]))
  const dash = new Map(dashboardRoutes(s.services).map((r) => [r.operationId, r]))
  const schema = (z: ZodType | undefined) => (z ? JSON.stringify(toJSONSchema(z, { unrepresentable: 'any' })) : null)
  t.ok(REST_ON_DASHBOARD.length >= 25, `${REST_ON_DASHBOARD.length} operations mounted`)
  for (const id of REST_ON_DASHBOARD) {
    const r = rest.get(id)!
    const d = dash.get(`dashboard${id[0]!.toUpperCase()}${id.slice(1)}`)!
    t.equal(d.path, r.path.replace(/^\/v1/, '/app/api'), `${id}: under /app/api`)
    t.same([d.method, schema(d.params), schema(d.query), schema(d.body), schema(d.response.schema)], [r.method, schema(r.params), schema(r.query), schema(r.body), schema(r.response.schema)], `${id}: the same schemas`)
    t.same([d.errors, d.price, d.rateLimit, d.invalidCode], [r.errors, r.price, r.rateLimit, r.invalidCode], `${id}: errors, price and limit`)
  }
  const exportRoute = dash.get('dashboardExportTranscript')!
  t.equal(exportRoute.price, PRICES.transcriptRead, 'the export is the charged transcript read')
  t.equal(exportRoute.handle.toString(), rest.get('getTranscript')!.handle.toString(), 'with its handler')
})

t.test('the reference tables: open before sign-in, the contract’s prices, and the advice MCP gives', async (t) => {
  const r = await s.inject({ method: 'GET', url: '/app/api/reference' })
  t.equal(r.statusCode, 200, 'the sign-in page can show a refusal in words too')
  const ref = r.json()
  const openapi = (await s.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  t.same(ref.prices, openapi['x-service-credits'], 'the prices of x-service-credits')
  t.same(Object.keys(ref.advice.noteFailures).sort(), Object.keys(NOTE_ERROR_CODES).sort(), 'a sentence for every errorCode a note can fail with')
  t.same(ref.advice.noteFailures.source_not_found, noteFailureAdvice('source_not_found'))
  t.match(ref.advice.noteFailures.source_not_found, { sentence: /^The link answered 404/, next: /import it again/ })
  t.same(ref.advice.refusals.insufficient_credits, REFUSAL_ADVICE.insufficient_credits)
  t.equal(ref.analysisTemplates.length, 14)
  // MCP's refusal carries the same next step.
  const tool = toolError(new DomainError('insufficient_credits', 'This operation needs 10 credits and 3 are left in this cycle.', { balance: 3, required: 10 }), () => {})
  const body = JSON.parse((tool.content[0] as { text: string }).text)
  t.match(body, { error: 'insufficient_credits', balance: 3, required: 10, next: REFUSAL_ADVICE.insufficient_credits!.next })
})

t.test('an upload from the browser: create, PUT to the presigned URL, finalize; an Idempotency-Key makes one note of a double click', async (t) => {
  const { d } = await signedIn(s, 'pro')
  const wav = wavBytes(2)
  const body = { filename: 'talk.wav', contentType: 'audio/wav', fileSizeBytes: wav.length, title: 'From the browser' }
  const noCsrf = await d.request('POST', '/app/api/notes', { body, csrf: false })
  t.equal(noCsrf.statusCode, 403, 'no CSRF token, no note')
  const first = await d.request('POST', '/app/api/notes', { body, headers: { 'idempotency-key': 'click-1' } })
  t.equal(first.statusCode, 202, first.body)
  const again = await d.request('POST', '/app/api/notes', { body, headers: { 'idempotency-key': 'click-1' } })
  t.equal(again.json().noteId, first.json().noteId, 'the same key answers the same note')
  const bad = await d.request('POST', '/app/api/notes', { body, headers: { 'idempotency-key': 'with space' } })
  t.equal(bad.statusCode, 400, 'a key that cannot be used is refused, as on REST')
  const { noteId, upload } = first.json()
  const url = new URL(upload.url)
  const put = await s.inject({ method: 'PUT', url: url.pathname + url.search, headers: upload.headers, payload: wav })
  t.equal(put.statusCode, 200, put.body)
  const fin = await d.request('POST', `/app/api/notes/${noteId}/finalize`, { body: {} })
  t.equal(fin.statusCode, 202, fin.body)
  const note = (await d.request('GET', `/app/api/notes/${noteId}`)).json()
  t.match(note, { title: 'From the browser', status: 'processing', durationSeconds: 2, progress: { stage: 'queued' } })
})

t.test('a note’s details, folders and speakers through the dashboard', async (t) => {
  const { d, accountId } = await signedIn(s, 'pro')
  const noteId = await readyNote(s, accountId, { transcript: lines, title: 'Planning' })
  const folder = await d.request('POST', '/app/api/folders', { body: { name: 'Clients' } })
  t.equal(folder.statusCode, 201)
  const patched = await d.request('PATCH', `/app/api/notes/${noteId}`, { body: { description: 'Q3', tags: ['planning'], folderId: folder.json().id } })
  t.match(patched.json(), { description: 'Q3', tags: ['planning'], folderId: folder.json().id })
  const found = (await d.request('GET', `/app/api/notes?tags=planning&folderId=${folder.json().id}&q=budget`)).json()
  t.same(found.notes.map((n: { id: string }) => n.id), [noteId], 'found by tag, folder and a word of the transcript')
  const suggested = await d.request('POST', `/app/api/notes/${noteId}/speakers/suggest`, { body: {} })
  t.equal(suggested.statusCode, 200, suggested.body)
  t.match(suggested.json().speakers.find((x: { label: string }) => x.label === 'A'), { name: 'Maria', nameStatus: 'suggested' })
  const accepted = await d.request('PATCH', `/app/api/notes/${noteId}/speakers/A`, { body: { name: 'Maria' } })
  t.match(accepted.json().speakers.find((x: { label: string }) => x.label === 'A'), { name: 'Maria', nameStatus: 'confirmed' })
  const other = (await d.request('GET', `/app/api/notes/${noteId}/transcript`)).json()
  t.match(other.speakers.find((x: { label: string }) => x.label === 'A'), { name: 'Maria', nameStatus: 'confirmed' }, 'the transcript view says so too')
})

t.test('suggesting names counts against the REST limit, per person signed in', async (t) => {
  const { d, accountId } = await signedIn(s, 'pro')
  const noteId = await readyNote(s, accountId, { transcript: lines })
  const max = OPERATION_LIMITS.speakersSuggest.max
  for (let i = 0; i < max; i++) t.equal((await d.request('POST', `/app/api/notes/${noteId}/speakers/suggest`, { body: {} })).statusCode, 200)
  const over = await d.request('POST', `/app/api/notes/${noteId}/speakers/suggest`, { body: {} })
  t.equal(over.statusCode, 429)
  t.match(over.json(), { error: 'rate_limit_exceeded', retryAfter: Number })
})

t.test('a charged read: an export costs its price; started by another site, it is refused and costs nothing', async (t) => {
  const { d, accountId } = await signedIn(s, 'pro')
  const noteId = await readyNote(s, accountId, { transcript: lines })
  const left = async () => (await s.services.status.status({ accountId })).credits.left
  const before = await left()
  const crossSite = await d.request('GET', `/app/api/notes/${noteId}/transcript/export?format=srt`, { headers: { 'sec-fetch-site': 'cross-site' } })
  t.equal(crossSite.statusCode, 403)
  t.equal(crossSite.json().error, 'csrf_check_failed')
  const foreign = await d.request('GET', `/app/api/notes/${noteId}/outline?generate=1`, { headers: { origin: 'https://evil.example' } })
  t.equal(foreign.statusCode, 403, 'another Origin too')
  t.equal(await left(), before, 'nothing charged')
  const ok = await d.request('GET', `/app/api/notes/${noteId}/transcript/export?format=srt`, { headers: { 'sec-fetch-site': 'same-origin' } })
  t.equal(ok.statusCode, 200)
  t.match(ok.body, /^1\n00:00:00,000 --> 00:00:04,000\nSpeaker A: Good morning/)
  t.equal(await left(), before - PRICES.transcriptRead.credits, 'one transcript read')
  const view = await d.request('GET', `/app/api/notes/${noteId}/transcript`, { headers: { 'sec-fetch-site': 'cross-site' } })
  t.equal(view.statusCode, 200, 'the free view is a plain read')
})

t.test('a 402 carries what the page needs to say how many credits are missing', async (t) => {
  const { d, accountId } = await signedIn(s, 'free')
  const noteId = await readyNote(s, accountId, { transcript: lines })
  const r = await d.request('POST', `/app/api/notes/${noteId}/deliverables`, { body: { kind: 'email', template: 'follow_up', locale: 'en' } })
  t.equal(r.statusCode, 402)
  t.match(r.json(), { error: 'insufficient_credits', required: PRICES.deliverable.credits, balance: 200 })
})

t.test('with the blob store elsewhere (S3), the page may send the upload there: the CSP names its origin', async (t) => {
  const s3 = await testService({
    env: { S3_BUCKET: 'notes', S3_ENDPOINT: 'http://127.0.0.1:9', S3_PUBLIC_ENDPOINT: 'https://uploads.example.com', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 'secret' },
  })
  t.teardown(s3.close)
  const csp = String((await s3.inject({ method: 'GET', url: '/app/' })).headers['content-security-policy'])
  t.match(csp, /connect-src 'self' https:\/\/uploads\.example\.com;/)
  const local = String((await s.inject({ method: 'GET', url: '/app/' })).headers['content-security-policy'])
  t.match(local, /connect-src 'self';/, 'the local store is this origin')
})
