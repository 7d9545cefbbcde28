// SSRF against the running service over HTTP (issue 11, item 1): links and webhook URLs that
// spell internal addresses are refused at create; a public-looking server that redirects to an
// internal one, a feed whose enclosure is internal, a directory that names an internal feed, and
// a webhook host that resolves to an internal address by delivery time all fail without the
// internal server ever being called, and nothing it would answer shows anywhere.
//
// "Public" here: the test servers listen on 127.0.0.1, and the service sees them through the
// names public.test (allowlisted by name, IMPORT_ALLOW_HOSTS) and hooks.test (not allowlisted;
// the resolver says what it resolves to). No address is allowlisted, so every spelling of
// 127.0.0.1 is judged as what it is.
import t from 'tap'
import { isIP } from 'node:net'
import type { AddressInfo } from 'node:net'
import { testService } from './support/service.ts'
import { startHttpServer } from './support/httpServer.ts'
import type { HostResolver } from '../ports/hostResolver.ts'

const SECRET = 'INTERNAL-ONLY-SECRET'
const internal = await startHttpServer({
  '/secret.mp3': { body: SECRET, headers: { 'content-type': 'audio/mpeg' } },
  '/hook': { status: 200, body: SECRET },
})
t.teardown(internal.close)
const ip4 = `[::ffff:7f00:1]:${internal.port}` // what the URL parser makes of [::ffff:127.0.0.1]
const web = await startHttpServer({
  '/to-mapped.mp3': { status: 302, headers: { location: `http://${ip4}/secret.mp3` } },
  '/to-decimal.mp3': { status: 307, headers: { location: `http://2130706433:${internal.port}/secret.mp3` } },
  '/to-nat64.mp3': { status: 301, headers: { location: `http://[64:ff9b::7f00:1]:${internal.port}/secret.mp3` } },
  '/feed.rss': {
    headers: { 'content-type': 'application/rss+xml' },
    body: `<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title><item><title>Ep 1</title><guid>ep1</guid><enclosure url="http://[::ffff:127.0.0.1]:${internal.port}/secret.mp3" type="audio/mpeg" length="20"/></item></channel></rss>`,
  },
  '/lookup': { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ results: [{ feedUrl: `http://${ip4}/feed.rss` }] }) },
})
t.teardown(web.close)

// hooks.test resolves to a public address when the webhook is registered, to an IPv6 spelling
// of loopback when it is called (DNS rebinding).
const hooksAnswer = { current: ['93.184.216.34'] }
const NAMES: Record<string, () => string[]> = {
  'public.test': () => ['127.0.0.1'],
  'hooks.test': () => hooksAnswer.current,
  'podcasts.apple.com': () => ['17.253.144.10'],
}
const resolver: HostResolver = {
  async resolve(host) {
    if (isIP(host)) return [host]
    const found = NAMES[host.toLowerCase()]
    if (!found) throw new Error(`ENOTFOUND ${host}`)
    return found()
  },
}

const s = await testService({
  workers: true,
  resolver,
  env: {
    IMPORT_ALLOW_HOSTS: 'public.test',
    PODCAST_DIRECTORY_URL: `http://public.test:${web.port}`,
    JOB_POLL_MS: '20',
    JOB_BACKOFF_BASE_MS: '20',
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_RETRY_DELAYS_SECONDS: '0.05',
  },
})
t.teardown(s.close)
await s.app.listen({ port: 0, host: '127.0.0.1' })
const base = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`

const pro = await s.account('pro')
const power = await s.account('power')
const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const r = await fetch(`${base}${path}`, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) })
  const text = await r.text()
  return { status: r.status, text, json: text ? JSON.parse(text) : null }
}
const until = async <T>(what: string, f: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await f()
    if (v !== null) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 40))
  }
}
const failedNote = (noteId: string) =>
  until(`note ${noteId} to fail`, async () => {
    const r = await call('GET', `/v1/notes/${noteId}`, pro.headers)
    return r.json.status === 'processing' ? null : r.json
  })

const SPELLINGS = [
  `http://[::ffff:127.0.0.1]:${internal.port}/secret.mp3`,
  `http://[::ffff:7f00:1]:${internal.port}/secret.mp3`,
  `http://[0:0:0:0:0:ffff:7f00:1]:${internal.port}/secret.mp3`,
  `http://[::ffff:a9fe:a9fe]/latest/meta-data/`,
  `http://[::a9fe:a9fe]/latest/meta-data/`,
  `http://[64:ff9b::a9fe:a9fe]/latest/meta-data/`,
  `http://[2002:a9fe:a9fe::]/latest/meta-data/`,
  `http://[2001:0:4136:e378:8000:63bf:5601:5601]/latest/meta-data/`,
  `http://[::ffff:0:7f00:1]:${internal.port}/secret.mp3`,
  `http://2130706433:${internal.port}/secret.mp3`,
  `http://0x7f.1:${internal.port}/secret.mp3`,
  `http://0251.0376.0251.0376/latest/meta-data/`,
  `http://100.64.0.1/a.mp3`,
  `http://[::ffff:6440:1]/a.mp3`,
  `http://10.1/a.mp3`,
  `http://[::ffff:c0a8:1]/a.mp3`,
  `http://[fe80::1]/a.mp3`,
  `http://[fd00:ec2::254]/latest/meta-data/`,
]

t.test('POST /v1/notes: every spelling of an internal address is 400 invalid_audio_url', async (t) => {
  for (const audioUrl of SPELLINGS) {
    const r = await call('POST', '/v1/notes', pro.headers, { audioUrl })
    t.equal(r.status, 400, audioUrl)
    t.equal(r.json.error, 'invalid_audio_url', audioUrl)
    t.match(r.json.message, /non-public address/, audioUrl)
  }
  t.equal(internal.hits.length, 0, 'the internal server was never called')
})

t.test('MCP import_from_url refuses them too', async (t) => {
  for (const audioUrl of SPELLINGS.slice(0, 4)) {
    const r = await fetch(`${base}/mcp/stream`, {
      method: 'POST',
      headers: { ...pro.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'import_from_url', arguments: { audioUrl } } }),
    })
    const text = await r.text()
    t.match(text, /invalid_audio_url/, audioUrl)
    t.match(text, /"isError":true/, audioUrl)
  }
  t.equal(internal.hits.length, 0)
})

t.test('a public-looking server that redirects to an internal one: the note fails source_blocked, the internal server is never called', async (t) => {
  for (const path of ['/to-mapped.mp3', '/to-decimal.mp3', '/to-nat64.mp3']) {
    const r = await call('POST', '/v1/notes', pro.headers, { audioUrl: `http://public.test:${web.port}${path}` })
    t.equal(r.status, 202, path)
    const note = await failedNote(r.json.noteId)
    t.match(note, { status: 'failed', errorCode: 'source_blocked' }, path)
    t.notMatch(JSON.stringify(note), SECRET)
  }
  t.ok(web.count('/to-mapped.mp3') >= 1, 'the public server was called')
  t.equal(internal.hits.length, 0, 'the internal server was never called')
})

t.test("a feed whose enclosure is internal, and a directory that names an internal feed, fail source_blocked", async (t) => {
  const feed = await call('POST', '/v1/notes', pro.headers, { audioUrl: `http://public.test:${web.port}/feed.rss` })
  t.equal(feed.status, 202)
  t.match(await failedNote(feed.json.noteId), { status: 'failed', errorCode: 'source_blocked' })
  t.equal(web.count('/feed.rss'), 1)
  const dir = await call('POST', '/v1/notes', pro.headers, { audioUrl: 'https://podcasts.apple.com/us/podcast/show/id123456' })
  t.equal(dir.status, 202)
  t.match(await failedNote(dir.json.noteId), { status: 'failed', errorCode: 'source_blocked' })
  t.ok(web.count('/lookup') >= 1, 'the directory was asked')
  t.equal(internal.hits.length, 0, 'the internal server was never called')
})

t.test('webhooks: internal URLs are refused at registration', async (t) => {
  for (const url of [`http://[::ffff:7f00:1]:${internal.port}/hook`, `http://[::ffff:a9fe:a9fe]/hook`, `http://2130706433:${internal.port}/hook`, `http://[64:ff9b::a00:1]/hook`, `http://public.test:${web.port}/hook`]) {
    const r = await call('POST', '/v1/webhooks', power.headers, { url })
    t.equal(r.status, 400, url)
    t.equal(r.json.error, 'invalid_request', url)
    t.match(r.json.message, /non-public address/, url)
  }
})

t.test('webhooks: a host that resolves to an internal address by delivery time is refused, and the log shows no internal answer', async (t) => {
  const created = await call('POST', '/v1/webhooks', power.headers, { url: `http://hooks.test:${internal.port}/hook` })
  t.equal(created.status, 201, 'hooks.test resolves to a public address at registration')
  hooksAnswer.current = ['::ffff:7f00:1']
  const queued = await call('POST', `/v1/webhooks/${created.json.id}/test`, power.headers)
  t.equal(queued.status, 202)
  const delivery = await until('the delivery to give up', async () => {
    const log = await call('GET', `/v1/webhooks/${created.json.id}/deliveries`, power.headers)
    const d = log.json.deliveries.find((x: { id: string }) => x.id === queued.json.id)
    return d && d.status === 'failed' ? { d, text: log.text } : null
  })
  t.equal(delivery.d.lastStatusCode, null)
  t.match(delivery.d.lastError, /non-public address ::ffff:7f00:1 \(ipv4-mapped 127\.0\.0\.1: loopback\)/)
  t.ok(delivery.d.tries.length >= 1 && delivery.d.tries.every((x: { statusCode: number | null; responseExcerpt?: string | null }) => x.statusCode === null && !x.responseExcerpt))
  t.notMatch(delivery.text, SECRET, 'nothing the internal server would answer is in the log')
  t.equal(internal.count('/hook'), 0, 'the internal server was never called')
})
