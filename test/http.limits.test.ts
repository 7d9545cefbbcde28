// The handler-counted limits on @fastify/rate-limit counters (issue 19 item f): dashboard
// sign-in attempts per IP and per email, OAuth client registrations per IP, API-key sign-ins on
// the consent page per IP. The same answers as the hand-written limiter gave: 429
// rate_limit_exceeded with retryAfter and Retry-After (the HTML page on the consent screen).
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { testService } from './support/service.ts'
import { DashboardClient, accountWithPerson } from './support/dashboard.ts'
import { hiddenFields } from './support/oauthBrowser.ts'

const json = { 'content-type': 'application/json' }

t.test('dashboard sign-in: 10 per email, 30 per address, per 10 minutes', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await accountWithPerson(s)
  const d = new DashboardClient(s)
  await d.session()
  const attempt = (email: string, remoteAddress = '127.0.0.1') =>
    s.inject({ method: 'POST', url: '/app/api/session', remoteAddress, headers: { ...json, cookie: d.cookieHeader(), 'x-csrf-token': d.csrf }, payload: JSON.stringify({ email, password: 'wrong password' }) })
  for (let i = 0; i < 10; i++) t.equal((await attempt(a.email.toUpperCase(), `10.0.0.${i + 1}`)).statusCode, 401)
  const email = await attempt(a.email, '10.0.1.1')
  t.equal(email.statusCode, 429, 'the 11th for one email, from any address (emails normalized)')
  const body = email.json()
  t.same(Object.keys(body).sort(), ['error', 'message', 'retryAfter'])
  t.equal(body.error, 'rate_limit_exceeded')
  t.ok(body.retryAfter > 590 && body.retryAfter <= 600, `retryAfter ${body.retryAfter}`)
  t.equal(email.headers['retry-after'], String(body.retryAfter))
  t.match(body.message, /Too many sign-in attempts; try again in \d+ s\./)

  const codes: number[] = []
  for (let i = 0; i < 31; i++) codes.push((await attempt(`nobody${i}@example.com`, '10.0.2.1')).statusCode)
  t.same(codes, [...Array(30).fill(401), 429], '30 per address')
  t.equal((await attempt('someone@example.com', '10.0.2.2')).statusCode, 401, 'another address counts apart')
})

t.test('OAuth: registrations per address, consent-page sign-ins per address', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const register = (remoteAddress: string) =>
    s.inject({ method: 'POST', url: '/oauth/register', remoteAddress, headers: json, payload: JSON.stringify({ client_name: 'Robot', redirect_uris: ['http://127.0.0.1:43119/callback'], token_endpoint_auth_method: 'none' }) })
  const codes: number[] = []
  for (let i = 0; i < 30; i++) codes.push((await register('10.1.0.1')).statusCode)
  t.same(codes, Array(30).fill(201))
  const refused = await register('10.1.0.1')
  t.equal(refused.statusCode, 429)
  t.same(Object.keys(refused.json()).sort(), ['error', 'message', 'retryAfter'])
  t.same([refused.json().error, refused.json().message], ['rate_limit_exceeded', 'Too many client registrations from this address.'])
  t.ok(refused.json().retryAfter > 3590, 'an hour')
  t.equal(refused.headers['retry-after'], String(refused.json().retryAfter))
  t.equal((await register('10.1.0.2')).statusCode, 201, 'another address counts apart')

  const reg = await register('10.1.0.3')
  const verifier = randomBytes(48).toString('base64url')
  const q = new URLSearchParams({ response_type: 'code', client_id: reg.json().client_id, redirect_uri: 'http://127.0.0.1:43119/callback', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', state: 's', scope: 'mcp' })
  const page = await s.inject({ method: 'GET', url: `/oauth/authorize?${q}` })
  const csrf = [page.headers['set-cookie']].flat().map(String).find((c) => c.startsWith('oauth_csrf='))!.split(';')[0]!
  const payload = new URLSearchParams({ ...hiddenFields(page.body), decision: 'approve', api_key: 'not a key' }).toString()
  const signIn = () => s.inject({ method: 'POST', url: '/oauth/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrf }, payload })
  const tries: number[] = []
  for (let i = 0; i < 31; i++) tries.push((await signIn()).statusCode)
  t.same(tries, [...Array(30).fill(401), 429])
  const last = await signIn()
  t.equal(last.headers['content-type'], 'text/html; charset=utf-8')
  t.match(last.body, /Too many sign-in attempts; try again in \d+ seconds\./)
})
