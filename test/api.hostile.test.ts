// Hostile input: for every route the app serves, at least 200 malformed or hostile requests
// (wrong types, huge and odd unicode strings, missing or odd auth headers, injection strings,
// bad ids, broken bodies). Never a 5xx, and every error body has the spec's shape: a stable
// snake_case `error` code and a `message`.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { testService } from './support/service.ts'

// A small deterministic generator, so a failure can be replayed.
function rng(seed: number) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 4294967296
  }
}

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\u0000\u0001\u0002',
  '💥'.repeat(300),
  'é'.normalize('NFD').repeat(1000),
  '\u202e\u202dreversed',
  '\ud800',
  'x'.repeat(70_000),
  "' OR '1'='1",
  '"; DROP TABLE events; --',
  '{"$gt": ""}',
  '$where',
  '../../../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  '<script>alert(1)</script>',
  '${7*7}{{7*7}}',
  '%00%ff%fe',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  '0x10',
  'true',
  '[]',
  '{}',
  'http://169.254.169.254/',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'ａｕｄｉｏ／ｍｐｅｇ',
  'audio/mpeg\r\nX-Injected: 1',
]

const NASTY_VALUES: unknown[] = [
  ...NASTY_STRINGS,
  0,
  -1,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  1e308,
  true,
  false,
  null,
  [],
  [1, 2, 3],
  ['a'.repeat(10_000)],
  {},
  { $gt: '' },
  { __proto__: { polluted: true } },
  { constructor: { prototype: { polluted: true } } },
  Array.from({ length: 5000 }, (_, i) => i),
]

function deepNest(depth: number): unknown {
  let v: unknown = 'bottom'
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}

const FIELD_NAMES = ['audioUrl', 'filename', 'contentType', 'fileSizeBytes', 'title', 'language', 'keepAudio', 'name', 'description', 'folderId', 'tags', 'question', 'template', 'templates', 'kind', 'locale', 'sessionId', 'find', 'replace', '__proto__', 'constructor', '$set']
const QUERY_NAMES = ['limit', 'cursor', 'q', 'folderId', 'status', 'since', 'tags', 'origin', 'format', 'translation', 'translationMode', 'language', 'generate', 'template', 'sig', 'exp', 'ct', 'max', 'size', 'constructor', '__proto__']

t.test('hostile requests never cause a 5xx and always get the error body', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const other = await s.account('pro')
  const mine = (await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: '{"filename":"a.wav","contentType":"audio/wav"}' })).json().noteId
  const theirs = (await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...other.headers, 'content-type': 'application/json' }, payload: '{"filename":"b.wav","contentType":"audio/wav"}' })).json().noteId
  const ids = [mine, theirs, randomUUID(), 'not-a-uuid', '00000000-0000-0000-0000-000000000000', "1' OR '1'='1", '%2e%2e%2f', 'x'.repeat(400), '💥', encodeURIComponent('<script>')]
  const authHeaders: (Record<string, string> | undefined)[] = [
    a.headers,
    a.headers,
    a.headers,
    undefined,
    { authorization: '' },
    { authorization: 'Bearer' },
    { authorization: `Bearer ${a.apiKey} extra` },
    { authorization: `bearer ${a.apiKey}` },
    { authorization: `Bearer ${'A'.repeat(8000)}` },
    { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.' },
    { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` },
    { authorization: 'Bearer nk_01ARZ3NDEKTSV4RRFFQ69G5FAV_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    { authorization: `Bearer ${a.apiKey.replace(/_/g, '-')}` },
  ]
  const contentTypes = ['application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', '', 'application/json; charset=utf-16', 'audio/wav']

  const routes = s.app.servedRoutes.filter((r) => !r.url.startsWith('/mcp') && !r.url.startsWith('/.well-known'))
  t.ok(routes.length >= 10, `${routes.length} routes`)
  let total = 0
  for (const [ri, route] of routes.entries()) {
    const rand = rng(ri + 1)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
    const failures: string[] = []
    const PER_ROUTE = 220
    for (let i = 0; i < PER_ROUTE; i++) {
      const url = route.url.replace(/:([A-Za-z_]+)/g, () => encodeURIComponent(pick(ids)).replace(/%25/g, '%'))
      const query = new URLSearchParams()
      const nQuery = Math.floor(rand() * 4)
      for (let q = 0; q < nQuery; q++) query.append(pick(QUERY_NAMES), String(pick(NASTY_VALUES) ?? ''))
      const headers: Record<string, string> = { ...(pick(authHeaders) ?? {}) }
      let payload: string | Buffer | undefined
      if (route.method !== 'GET' && route.method !== 'DELETE') {
        const kind = i % 6
        const ct = pick(contentTypes)
        if (ct) headers['content-type'] = ct
        if (kind === 0) payload = JSON.stringify(Object.fromEntries(Array.from({ length: 1 + Math.floor(rand() * 5) }, () => [pick(FIELD_NAMES), pick(NASTY_VALUES)])))
        else if (kind === 1) payload = pick(['{', '{"a":', '[1,2', 'null', '"x"', '{"a":1}}', '\u0000', '{"__proto__":{"admin":true}}', ''])
        else if (kind === 2) payload = JSON.stringify(deepNest(200 + Math.floor(rand() * 2000)))
        else if (kind === 3) payload = Buffer.from(Array.from({ length: 64 + Math.floor(rand() * 4096) }, () => Math.floor(rand() * 256)))
        else if (kind === 4) payload = JSON.stringify({ audioUrl: pick(NASTY_STRINGS), filename: pick(NASTY_STRINGS), contentType: pick(NASTY_STRINGS), title: pick(NASTY_STRINGS), name: pick(NASTY_STRINGS), tags: [pick(NASTY_STRINGS)] })
        else payload = JSON.stringify(pick(NASTY_VALUES))
      }
      const qs = query.toString()
      const r = await s.inject({ method: route.method as 'GET', url: qs ? `${url}?${qs}` : url, headers, ...(payload !== undefined ? { payload } : {}) })
      total++
      const label = `${route.method} ${url.slice(0, 60)} #${i}`
      if (r.statusCode >= 500) failures.push(`${label}: ${r.statusCode} ${r.body.slice(0, 200)}`)
      // The OAuth consent screen is for a person's browser: its refusals are pages, not JSON.
      const isPage = String(r.headers['content-type'] ?? '').startsWith('text/html') && route.url.startsWith('/oauth/authorize')
      if (r.statusCode >= 400 && !isPage) {
        let body: { error?: unknown; message?: unknown } | null = null
        try {
          body = r.json()
        } catch {
          failures.push(`${label}: not JSON: ${r.body.slice(0, 100)}`)
          continue
        }
        if (typeof body?.error !== 'string' || !/^[a-z][a-z_]*$/.test(body.error) || (body.message !== undefined && typeof body.message !== 'string')) failures.push(`${label}: bad error body ${r.body.slice(0, 100)}`)
      }
    }
    t.same(failures.slice(0, 10), [], `${route.method} ${route.url}: ${PER_ROUTE} hostile requests, no 5xx, error bodies well formed`)
  }
  t.ok(total >= routes.length * 200, `${total} requests in all`)
  // The hostile traffic did not leak into another account.
  const list = await s.inject({ method: 'GET', url: '/v1/notes', headers: other.headers })
  t.equal(list.json().notes.length, 1)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')
})
