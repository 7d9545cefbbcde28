// Responses common to every /v1 endpoint (spec part 4): 401, 403, 429, and the error body.
import t from 'tap'
import { testService } from './support/service.ts'

t.test('authentication, plan and rate limit', async (t) => {
  const s = await testService({ env: { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_SECONDS: '60' } })
  t.teardown(s.close)
  const pro = await s.account('pro')

  t.test('given no Authorization header, then 401 invalid_api_key', async (t) => {
    const r = await s.inject({ method: 'GET', url: '/v1/notes' })
    t.equal(r.statusCode, 401)
    t.equal(r.json().error, 'invalid_api_key')
    t.match(r.headers['www-authenticate'], /Bearer/)
  })

  t.test('given a session JWT or a mangled key, then 401 invalid_api_key', async (t) => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl'
    for (const value of [`Bearer ${jwt}`, `Bearer ${pro.apiKey}x`, `Bearer ${pro.apiKey.slice(0, -1)}${pro.apiKey.endsWith('A') ? 'B' : 'A'}`, pro.apiKey, `Basic ${pro.apiKey}`, 'Bearer ']) {
      const r = await s.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: value } })
      t.equal(r.statusCode, 401, value.slice(0, 30))
      t.equal(r.json().error, 'invalid_api_key')
    }
  })

  t.test('given a plan below pro, then 403 tier_upgrade_required with both tiers', async (t) => {
    for (const plan of ['free', 'personal'] as const) {
      const a = await s.account(plan)
      const r = await s.inject({ method: 'GET', url: '/v1/notes', headers: a.headers })
      t.equal(r.statusCode, 403)
      t.same(r.json(), { error: 'tier_upgrade_required', message: r.json().message, currentTier: plan, requiredTier: 'pro' })
    }
    for (const plan of ['pro', 'power', 'team'] as const) {
      const a = await s.account(plan)
      t.equal((await s.inject({ method: 'GET', url: '/v1/notes', headers: a.headers })).statusCode, 200, plan)
    }
  })

  t.test('given a revoked key, then 401 at once', async (t) => {
    const a = await s.account('pro')
    const extra = await s.services.accounts.createApiKey(a.accountId, 'second')
    t.equal((await s.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: `Bearer ${extra.apiKey}` } })).statusCode, 200)
    await s.services.accounts.revokeApiKey(a.accountId, extra.keyId)
    t.equal((await s.inject({ method: 'GET', url: '/v1/notes', headers: { authorization: `Bearer ${extra.apiKey}` } })).statusCode, 401)
    t.equal((await s.inject({ method: 'GET', url: '/v1/notes', headers: a.headers })).statusCode, 200, 'the other key still works')
  })

  t.test('given more requests than the limit, then 429 with retryAfter and Retry-After, per key', async (t) => {
    const a = await s.account('pro')
    const b = await s.account('pro')
    for (let i = 0; i < 5; i++) t.equal((await s.inject({ method: 'GET', url: '/v1/notes', headers: a.headers })).statusCode, 200)
    const r = await s.inject({ method: 'GET', url: '/v1/notes', headers: a.headers })
    t.equal(r.statusCode, 429)
    t.equal(r.json().error, 'rate_limit_exceeded')
    t.ok(Number.isInteger(r.json().retryAfter) && r.json().retryAfter >= 1 && r.json().retryAfter <= 60)
    t.equal(r.headers['retry-after'], String(r.json().retryAfter))
    t.equal((await s.inject({ method: 'GET', url: '/v1/notes', headers: b.headers })).statusCode, 200, 'another key has its own budget')
  })

  t.test('what fastify rejects comes out in the error body with the route’s 400 code', async (t) => {
    const s2 = await testService()
    t.teardown(s2.close)
    const a = await s2.account('pro')
    const cases = [
      { method: 'POST' as const, url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: '{"audioUrl": ', code: 'invalid_audio_url' },
      { method: 'POST' as const, url: '/v1/notes', headers: { ...a.headers, 'content-type': 'text/plain' }, payload: 'hello', code: 'invalid_audio_url' },
      { method: 'POST' as const, url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ audioUrl: 'x'.repeat(2 * 1024 * 1024) }), code: 'invalid_audio_url' },
      { method: 'GET' as const, url: '/v1/notes?limit=0', headers: a.headers, code: 'invalid_query' },
      { method: 'GET' as const, url: '/v1/nope', headers: a.headers, code: 'not_found', status: 404 },
      { method: 'GET' as const, url: '/v1/notes/not-a-uuid', headers: a.headers, code: 'not_found', status: 404 },
    ]
    for (const c of cases) {
      const r = await s2.inject({ method: c.method, url: c.url, headers: c.headers, ...(c.payload !== undefined ? { payload: c.payload } : {}) })
      t.equal(r.statusCode, c.status ?? 400, `${c.method} ${c.url.slice(0, 40)}`)
      t.equal(r.json().error, c.code)
      t.type(r.json().message, 'string')
    }
  })
})
