// The dashboard's built files over HTTP (issue 19): @fastify/static with the cache headers of
// before (hashed assets immutable for a year, the page never cached), byte ranges, validators,
// the precompressed .br/.gz files the build writes; the single-page fallback; and the security
// headers, held to exactly what the hand-written version sent (CSP included).
import t from 'tap'
import Fastify from 'fastify'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { staticDashboard } from '../api/dashboard/static.ts'
import { errorHandling } from '../api/http/errorHandling.ts'

// What the dashboard sent before the plugins (main at 9178c79), header for header.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
const SECURITY_BEFORE = { 'content-security-policy': CSP, 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin' }

t.test('the built files: cache headers, ranges, validators, precompressed, fallback, security headers', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const { buildWeb } = await import('../scripts/build-web.ts')
  await buildWeb()

  const page = await s.inject({ method: 'GET', url: '/app/keys' })
  t.equal(page.statusCode, 200)
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  t.equal(page.headers['cache-control'], 'no-cache', 'the page is revalidated every time')
  t.has(page.headers, SECURITY_BEFORE, 'the page keeps its security headers, the CSP byte for byte')
  // helmet's additions, and the two it is told to leave out.
  t.has(page.headers, {
    'cross-origin-resource-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  })
  t.notOk(page.headers['strict-transport-security'], 'HSTS is the TLS terminator’s decision')
  t.notOk(page.headers['cross-origin-opener-policy'], 'a popup sign-in keeps its opener')
  t.equal([page.headers['content-security-policy']].flat().length, 1, 'one CSP header')
  const js = /src="(\/app\/assets\/[^"]+\.js)"/.exec(page.body)![1]!

  const asset = await s.inject({ method: 'GET', url: js })
  t.same([asset.statusCode, asset.headers['content-type'], asset.headers['cache-control']], [200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'])
  t.has(asset.headers, SECURITY_BEFORE)
  t.equal(asset.headers['accept-ranges'], 'bytes')
  t.ok(asset.headers.etag, 'an ETag to revalidate with')
  const size = asset.rawPayload.length

  const again = await s.inject({ method: 'GET', url: js, headers: { 'if-none-match': String(asset.headers.etag) } })
  t.equal(again.statusCode, 304, 'a known version is not sent again')

  const part = await s.inject({ method: 'GET', url: js, headers: { range: 'bytes=0-99' } })
  t.same([part.statusCode, part.headers['content-range'], part.rawPayload.length], [206, `bytes 0-99/${size}`, 100], 'byte ranges')
  t.same(part.rawPayload, asset.rawPayload.subarray(0, 100))

  const br = await s.inject({ method: 'GET', url: js, headers: { 'accept-encoding': 'br, gzip' } })
  t.same([br.statusCode, br.headers['content-encoding'], br.headers['content-type'], br.headers['cache-control']], [200, 'br', 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'], 'the brotli file the build wrote')
  t.match(String(br.headers.vary), /accept-encoding/i)
  t.ok(br.rawPayload.length < size, 'smaller than the plain file')
  t.same(brotliDecompressSync(br.rawPayload), asset.rawPayload)
  const gz = await s.inject({ method: 'GET', url: js, headers: { 'accept-encoding': 'gzip' } })
  t.equal(gz.headers['content-encoding'], 'gzip')
  t.same(gunzipSync(gz.rawPayload), asset.rawPayload)

  for (const url of ['/app/assets/nothing.js', '/app/assets/../../package.json', '/app/assets/%2e%2e/%2e%2e/package.json', '/app/assets/']) {
    const r = await s.inject({ method: 'GET', url })
    t.same([r.statusCode, r.json().error], [404, 'not_found'], url)
  }
  const head = await s.inject({ method: 'HEAD', url: js })
  t.same([head.statusCode, head.headers['content-length']], [200, String(size)])
})

t.test('no build yet: the page says how to build it, with its headers', async (t) => {
  const app = Fastify()
  await app.register(errorHandling)
  await app.register(staticDashboard(tempDir().dir))
  t.teardown(() => app.close())
  const r = await app.inject({ method: 'GET', url: '/app/notes/x' })
  t.same([r.statusCode, r.headers['content-type']], [503, 'text/html; charset=utf-8'])
  t.match(r.body, /npm run build:web/)
  t.has(r.headers, SECURITY_BEFORE)
  t.equal((await app.inject({ method: 'GET', url: '/app/assets/index.js' })).statusCode, 404)
})
