// Browser-based MCP clients (issue 19 with issue 17 item 5): CORS on the MCP endpoints and the
// OAuth endpoints they call, an Origin check per the MCP transport's security guidance (an
// unknown Origin gets 403 origin_not_allowed, preflight or not), the discovery documents open to
// any origin, and nothing changed for REST, the dashboard and non-browser clients.
import t from 'tap'
import { testService } from './support/service.ts'
import { buildMcpApp } from '../mcp/http.ts'
import { loadConfig } from '../app/config.ts'

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
const INSPECTOR = 'http://localhost:6274'
const EVIL = 'https://evil.example'

const preflight = (origin: string, headers = 'authorization, content-type, mcp-protocol-version') => ({
  origin,
  'access-control-request-method': 'POST',
  'access-control-request-headers': headers,
})

t.test('the MCP endpoint on {base_url}: preflight, actual requests, the Origin check', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')

  const pre = await s.inject({ method: 'OPTIONS', url: '/mcp/stream', headers: preflight(INSPECTOR) })
  t.equal(pre.statusCode, 204, 'a loopback origin (the MCP Inspector) passes the preflight')
  t.equal(pre.headers['access-control-allow-origin'], INSPECTOR)
  t.match(pre.headers['access-control-allow-methods'], /POST/)
  t.match(pre.headers['access-control-allow-headers'], /authorization/)
  t.match(pre.headers['access-control-allow-headers'], /mcp-protocol-version/)
  t.equal(pre.headers['access-control-max-age'], '600')
  t.notOk(pre.headers['access-control-allow-credentials'], 'bearer tokens only: no credentials mode')
  t.match(String(pre.headers.vary), /origin/i)

  const call = await s.inject({ method: 'POST', url: '/mcp/stream', headers: { ...MCP_HEADERS, ...a.headers, origin: INSPECTOR }, payload: LIST })
  t.equal(call.statusCode, 200)
  t.equal(call.headers['access-control-allow-origin'], INSPECTOR)
  t.match(call.headers['access-control-expose-headers'], /www-authenticate/)

  const anonymous = await s.inject({ method: 'POST', url: '/mcp/stream', headers: { ...MCP_HEADERS, origin: INSPECTOR }, payload: LIST })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.headers['access-control-allow-origin'], INSPECTOR, 'a browser client can read the 401 and its WWW-Authenticate (OAuth discovery)')

  for (const r of [
    await s.inject({ method: 'OPTIONS', url: '/mcp/stream', headers: preflight(EVIL) }),
    await s.inject({ method: 'POST', url: '/mcp/stream', headers: { ...MCP_HEADERS, ...a.headers, origin: EVIL }, payload: LIST }),
    await s.inject({ method: 'POST', url: '/mcp/stream', headers: { ...MCP_HEADERS, origin: EVIL }, payload: LIST }),
  ]) {
    t.equal(r.statusCode, 403, 'an unknown Origin is refused, before authentication')
    t.same(Object.keys(r.json()).sort(), ['error', 'message'])
    t.equal(r.json().error, 'origin_not_allowed')
    t.notOk(r.headers['access-control-allow-origin'])
  }

  const noOrigin = await s.inject({ method: 'POST', url: '/mcp/stream', headers: { ...MCP_HEADERS, ...a.headers }, payload: LIST })
  t.equal(noOrigin.statusCode, 200, 'a client without Origin (not a browser) as before')
  t.notOk(noOrigin.headers['access-control-allow-origin'])
  const own = await s.inject({ method: 'POST', url: '/mcp/stream', headers: { ...MCP_HEADERS, ...a.headers, origin: 'http://127.0.0.1:3000' }, payload: LIST })
  t.equal(own.statusCode, 200, 'the service’s own origin')
})

t.test('OAuth: metadata open to any origin, the endpoints a browser client calls checked', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp/stream', '/mcp/info']) {
    const r = await s.inject({ method: 'GET', url, headers: { origin: EVIL } })
    t.same([r.statusCode, r.headers['access-control-allow-origin']], [200, '*'], url)
    const p = await s.inject({ method: 'OPTIONS', url, headers: { origin: EVIL, 'access-control-request-method': 'GET' } })
    t.same([p.statusCode, p.headers['access-control-allow-origin']], [204, '*'], `${url} preflight`)
  }
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const token = await s.inject({ method: 'POST', url: '/oauth/token', headers: { ...form, origin: INSPECTOR }, payload: 'grant_type=authorization_code' })
  t.equal(token.headers['access-control-allow-origin'], INSPECTOR)
  t.equal(token.statusCode, 401, 'OAuth’s own answer (no client), readable by the client')
  t.ok(token.json().error_description)
  const pre = await s.inject({ method: 'OPTIONS', url: '/oauth/register', headers: preflight(INSPECTOR, 'content-type') })
  t.same([pre.statusCode, pre.headers['access-control-allow-origin']], [204, INSPECTOR])
  for (const url of ['/oauth/token', '/oauth/register', '/oauth/revoke']) {
    const r = await s.inject({ method: 'POST', url, headers: { ...form, origin: EVIL }, payload: 'x=1' })
    t.same([r.statusCode, r.json()], [403, { error: 'origin_not_allowed', message: r.json().message }], url)
  }
})

t.test('REST and the dashboard: no CORS, OPTIONS still 404', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const r = await s.inject({ method: 'GET', url: '/v1/notes', headers: { ...a.headers, origin: INSPECTOR } })
  t.equal(r.statusCode, 200)
  t.notOk(r.headers['access-control-allow-origin'])
  t.notMatch(String(r.headers.vary ?? ''), /origin/i)
  for (const url of ['/app/keys', '/app/assets/x.js', '/v1/openapi.json']) t.notMatch(String((await s.inject({ method: 'GET', url, headers: { origin: INSPECTOR } })).headers.vary ?? ''), /origin/i, url)
  for (const url of ['/v1/notes', '/app/', '/nothing']) {
    const o = await s.inject({ method: 'OPTIONS', url, headers: preflight(INSPECTOR) })
    t.same([o.statusCode, o.json().error], [404, 'not_found'], url)
    t.notOk(o.headers['access-control-allow-origin'])
  }
  t.notOk(s.app.servedRoutes.some((x) => x.method === 'OPTIONS' && x.url.endsWith('*') && !x.url.startsWith('/app')), 'the preflight route is plumbing, not an operation')
})

t.test('MCP_ALLOWED_ORIGINS, and the {mcp_url} listener', async (t) => {
  const s = await testService({ env: { MCP_ALLOWED_ORIGINS: 'https://chat.example.com, https://tools.example.org:8443' } })
  t.teardown(s.close)
  const mcp = buildMcpApp(s.services)
  t.teardown(() => mcp.close())
  const a = await s.account('free')
  const ok = await mcp.inject({ method: 'POST', url: '/', headers: { ...MCP_HEADERS, ...a.headers, origin: 'https://chat.example.com' }, payload: LIST })
  t.same([ok.statusCode, ok.headers['access-control-allow-origin']], [200, 'https://chat.example.com'])
  const pre = await mcp.inject({ method: 'OPTIONS', url: '/demo', headers: preflight('https://tools.example.org:8443', 'content-type') })
  t.same([pre.statusCode, pre.headers['access-control-allow-origin']], [204, 'https://tools.example.org:8443'])
  const bad = await mcp.inject({ method: 'POST', url: '/demo', headers: { ...MCP_HEADERS, origin: 'https://chat.example.com.evil.example' }, payload: LIST })
  t.same([bad.statusCode, bad.json().error], [403, 'origin_not_allowed'])
  const meta = await mcp.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource', headers: { origin: EVIL } })
  t.same([meta.statusCode, meta.headers['access-control-allow-origin']], [200, '*'])

  const any = await testService({ env: { MCP_ALLOWED_ORIGINS: '*' } })
  t.teardown(any.close)
  const b = await any.account('free')
  const r = await any.inject({ method: 'POST', url: '/mcp/stream', headers: { ...MCP_HEADERS, ...b.headers, origin: EVIL }, payload: LIST })
  t.same([r.statusCode, r.headers['access-control-allow-origin']], [200, EVIL])
  t.throws(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'https://chat.example.com/path' }), /not an origin/)
  t.throws(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'chat.example.com' }), /not an origin/)
})
