// Signed cookies (issue 19): the dashboard's pre-session (CSRF) cookie and the consent page's
// CSRF and sign-in cookies are signed with @fastify/cookie, each surface under its own secret;
// a cookie whose signature does not check reads as absent. The dashboard's session cookie stays
// the bare session token (a secret checked against its hash; the suite reads it as is). Their flags are exactly
// what they were (attribute for attribute, in the same order).
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import fastifyCookie from '@fastify/cookie'
import { testService } from './support/service.ts'
import { DashboardClient, PASSWORD, accountWithPerson } from './support/dashboard.ts'
import { hiddenFields } from './support/oauthBrowser.ts'

const json = { 'content-type': 'application/json' }
const form = { 'content-type': 'application/x-www-form-urlencoded' }
const setCookies = (r: { headers: Record<string, unknown> }) => [r.headers['set-cookie'] ?? []].flat().map(String)
const valueOf = (c: string) => decodeURIComponent(c.slice(c.indexOf('=') + 1, c.indexOf(';')))

t.test('dashboard cookies: flags as before, the pre-session cookie signed', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const secret = s.services.settings.secrets.dashboard
  const a = await accountWithPerson(s)
  const d = new DashboardClient(s)
  const anon = await d.request('GET', '/app/api/session')
  const pre = setCookies(anon).find((c) => c.startsWith('notes_presession='))!
  t.match(pre, /^notes_presession=[^;]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=Strict$/, 'pre-session flags as before')
  const preValue = fastifyCookie.unsign(valueOf(pre), secret)
  t.same([preValue.valid, /^[A-Za-z0-9_-]{43}$/.test(String(preValue.value))], [true, true], 'signed with the dashboard secret')

  const signIn = await d.signIn(a.email)
  t.equal(signIn.statusCode, 201)
  const all = setCookies(signIn)
  t.same(all.map((c) => c.split('=')[0]), ['notes_session', 'notes_presession'], 'each cookie once')
  const session = all[0]!
  t.match(session, /^notes_session=[^;]+; Path=\/; Max-Age=43\d\d\d; HttpOnly; SameSite=Lax$/, 'session flags as before')
  t.equal(all[1], 'notes_presession=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict', 'the pre-session cookie cleared as before')
  const token = valueOf(session)
  t.match(token, /^[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/, 'the session cookie is the session token itself (not signed: it is a secret checked against its hash)')
  const forged = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`
  const r = await s.inject({ method: 'GET', url: '/app/api/keys', headers: { cookie: `notes_session=${encodeURIComponent(forged)}` } })
  t.same([r.statusCode, r.json().error], [401, 'not_signed_in'], 'a changed token is nobody')

  // The pre-session cookie: a forged (unsigned) one does not carry the sign-in form's token.
  const d2 = new DashboardClient(s)
  const first = await d2.request('GET', '/app/api/session')
  const csrf = first.json().csrfToken as string
  const bare = String(fastifyCookie.unsign(decodeURIComponent(d2.cookies.get('notes_presession')!), secret).value)
  const signInWith = (cookie: string) =>
    s.inject({ method: 'POST', url: '/app/api/session', headers: { ...json, cookie, 'x-csrf-token': csrf }, payload: JSON.stringify({ email: a.email, password: PASSWORD }) })
  const unsignedPre = await signInWith(`notes_presession=${bare}`)
  t.same([unsignedPre.statusCode, unsignedPre.json().error], [403, 'csrf_check_failed'], 'the pre-session cookie without its signature')
  t.equal((await signInWith(`notes_presession=${d2.cookies.get('notes_presession')}`)).statusCode, 201, 'with it')
})

t.test('over https: the same flags with Secure and the __Host- prefix', async (t) => {
  const s = await testService({ env: { PUBLIC_BASE_URL: 'https://notes.example.com' } })
  t.teardown(s.close)
  const a = await accountWithPerson(s)
  const d = new DashboardClient(s)
  const r = await d.signIn(a.email)
  t.match(setCookies(r)[0], /^__Host-notes_session=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/)
})

t.test('consent page cookies: signed with the OAuth secret, flags as before', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const secret = s.services.settings.secrets.oauth
  const acct = await s.account('pro')
  const verifier = randomBytes(48).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const redirectUri = 'http://127.0.0.1:43119/callback'
  const reg = await s.inject({ method: 'POST', url: '/oauth/register', headers: json, payload: JSON.stringify({ client_name: 'Robot', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }) })
  const q = new URLSearchParams({ response_type: 'code', client_id: reg.json().client_id, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: 's1', scope: 'mcp' })
  const page = await s.inject({ method: 'GET', url: `/oauth/authorize?${q}` })
  const csrf = setCookies(page).find((c) => c.startsWith('oauth_csrf='))!
  t.match(csrf, /^oauth_csrf=[^;]+; Path=\/oauth; Max-Age=3600; HttpOnly; SameSite=Strict$/, 'CSRF cookie flags as before')
  const csrfValue = fastifyCookie.unsign(valueOf(csrf), secret)
  t.ok(csrfValue.valid, 'signed with the OAuth secret')
  const fields = hiddenFields(page.body)
  const post = (cookie: string, extra: Record<string, string>) =>
    s.inject({ method: 'POST', url: '/oauth/authorize', headers: { ...form, cookie }, payload: new URLSearchParams({ ...fields, decision: 'approve', ...extra }).toString() })

  const unsignedCsrf = await post(`oauth_csrf=${String(csrfValue.value)}`, { api_key: acct.apiKey })
  t.equal(unsignedCsrf.statusCode, 403, 'the CSRF cookie without its signature does not count')

  const approved = await post(csrf.split(';')[0]!, { api_key: acct.apiKey })
  t.equal(approved.statusCode, 302)
  const session = setCookies(approved).find((c) => c.startsWith('oauth_session='))!
  t.match(session, /^oauth_session=[^;]+; Path=\/oauth; Max-Age=43200; HttpOnly; SameSite=Lax$/, 'sign-in cookie flags as before')
  const inner = fastifyCookie.unsign(valueOf(session), secret)
  t.ok(inner.valid)
  t.match(String(inner.value), /^[^.]+\.[^.]+\.\d+$/, 'account, key and expiry under the signature')

  const [accountId, keyId] = String(inner.value).split('.')
  const again = await s.inject({ method: 'GET', url: `/oauth/authorize?${q}`, headers: { cookie: session.split(';')[0]! } })
  t.equal(again.statusCode, 302, 'the signed sign-in cookie is remembered (consent given before)')
  const later = `${accountId}.${keyId}.${Math.floor(Date.now() / 1000) + 999_999}`
  for (const [what, value] of <[string, string][]>[
    ['an unsigned sign-in cookie', later],
    ['a longer expiry under the old signature', `${later}.${valueOf(session).split('.').at(-1)}`],
    ['an expired one, signed', fastifyCookie.sign(`${accountId}.${keyId}.${Math.floor(Date.now() / 1000) - 1}`, secret)],
  ]) {
    const r = await s.inject({ method: 'GET', url: `/oauth/authorize?${q}`, headers: { cookie: `oauth_session=${encodeURIComponent(value)}` } })
    t.equal(r.statusCode, 200, `${what}: not signed in, the consent page again`)
  }
})
