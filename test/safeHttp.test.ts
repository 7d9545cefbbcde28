// The import fetcher's SSRF rules at download time: the address is checked and pinned for every
// hop (DNS is asked once per hop; the connection goes to the checked address), redirects are
// re-checked, bodies are capped while streaming, slow servers time out. Webhook calls follow the
// same address rules and never follow redirects.
import t from 'tap'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { safeHttpFetcher, safeWebhookTransport } from '../adapters/net/safeHttp.ts'
import { targetResolver } from '../commands/publicTarget.ts'
import { isPipelineFailure } from '../ports/pipelineFailure.ts'
import type { HostResolver } from '../ports/hostResolver.ts'
import { startHttpServer } from './support/httpServer.ts'
import { tempDir } from './support/tmp.ts'
import { Sources } from '../workers/sources.ts'
import { fastXmlPodcastFeedParser } from '../adapters/xml/podcastFeed.ts'

const tmp = tempDir('safehttp-')
t.teardown(tmp.remove)
const big = Buffer.alloc(300_000, 1)
const web = await startHttpServer({
  '/ok': { body: 'hello' },
  '/big': { body: big },
  '/slow': { body: Buffer.alloc(10_000, 2), trickleMs: 400, chunkBytes: 1000 },
  '/to-private': { status: 302, headers: { location: 'http://private.test/x' } },
  '/to-ok': { status: 301, headers: { location: '/ok' } },
  '/loop': { status: 302, headers: { location: '/loop' } },
  '/missing': { status: 404 },
  '/busy': { status: 503 },
  '/to-garbage': { status: 302, headers: { location: 'http://[::1/x.mp3' } },
  '/feed.rss': {
    headers: { 'content-type': 'application/rss+xml' },
    body: '<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title><item><title>Ep</title><guid>e</guid><enclosure url="http://[bad/ep.mp3" type="audio/mpeg" length="9"/></item></channel></rss>',
  },
})
t.teardown(web.close)

// Names that only this resolver knows: a connection can only succeed through the pinned lookup.
let asked: string[] = []
const answers: Record<string, string[][]> = {}
const resolver: HostResolver = {
  async resolve(host) {
    asked.push(host)
    if (host === '127.0.0.1') return ['127.0.0.1']
    const queue = answers[host]
    if (!queue?.length) throw new Error('ENOTFOUND')
    return queue.length > 1 ? queue.shift()! : queue[0]!
  },
}
const http = safeHttpFetcher({ resolveTarget: targetResolver(resolver, ['127.0.0.1']), connectTimeoutMs: 2000, idleTimeoutMs: 300, totalTimeoutMs: 5000 })
const failure = async (p: Promise<unknown>) => {
  const e = await p.catch((err: unknown) => err)
  return isPipelineFailure(e) ? { errorCode: e.errorCode, retriable: e.retriable } : { unexpected: String(e) }
}
const port = web.port

t.test('the connection goes to the address that was checked, with one resolution per hop', async (t) => {
  answers['pinned.test'] = [['127.0.0.1'], ['10.0.0.8']]
  asked = []
  const r = await http.text(`http://pinned.test:${port}/ok`, { maxBytes: 1000 })
  t.equal(r.body, 'hello')
  t.same(asked, ['pinned.test'], 'asked once; a second (rebinding) answer is never used')
})

t.test('a name with any non-public address is refused, unless allowlisted', async (t) => {
  answers['mixed.test'] = [['127.0.0.1', '10.0.0.9']]
  t.same(await failure(http.text(`http://mixed.test:${port}/ok`, { maxBytes: 1000 })), { errorCode: 'source_blocked', retriable: false })
  t.same(await failure(http.text(`http://nowhere.test:${port}/ok`, { maxBytes: 1000 })), { errorCode: 'download_failed', retriable: true }, 'an unresolvable name is a passing failure')
  t.same(await failure(http.text(`http://[::1]:${port}/ok`, { maxBytes: 1000 })), { errorCode: 'source_blocked', retriable: false }, 'an IP literal is checked as it is, without asking the resolver')
})

t.test('redirects are followed and each target checked again', async (t) => {
  answers['private.test'] = [['192.168.1.20']]
  t.same(await failure(http.text(web.url('/to-private'), { maxBytes: 1000 })), { errorCode: 'source_blocked', retriable: false })
  t.equal((await http.text(web.url('/to-ok'), { maxBytes: 1000 })).finalUrl, web.url('/ok'))
  t.match(await failure(http.text(web.url('/loop'), { maxBytes: 1000 })), { errorCode: 'download_failed' })
})

t.test('status codes: 404 is final, 503 is worth another attempt', async (t) => {
  t.same(await failure(http.text(web.url('/missing'), { maxBytes: 1000 })), { errorCode: 'source_not_found', retriable: false })
  t.same(await failure(http.text(web.url('/busy'), { maxBytes: 1000 })), { errorCode: 'download_failed', retriable: true })
})

t.test('bodies are capped (announced or streamed) and downloads land in the file', async (t) => {
  t.same(await failure(http.download(web.url('/big'), join(tmp.dir, 'big'), { maxBytes: 100_000 })), { errorCode: 'source_too_large', retriable: false })
  const seen: number[] = []
  const r = await http.download(web.url('/big'), join(tmp.dir, 'big2'), { maxBytes: 1_000_000, onProgress: (b) => seen.push(b) })
  t.equal(r.bytes, big.length)
  t.same(await readFile(join(tmp.dir, 'big2')), big)
  t.ok(seen.length > 0 && seen.at(-1) === big.length)
})

t.test('a server that stops sending is given up after the idle timeout', async (t) => {
  t.same(await failure(http.download(web.url('/slow'), join(tmp.dir, 'slow'), { maxBytes: 100_000 })), { errorCode: 'download_failed', retriable: true })
})

t.test('webhook calls: posted with the headers, never redirected, private addresses refused', async (t) => {
  web.routes.set('/hook', (req, body) => ({ status: 204, headers: { 'x-got': `${req.headers['webhook-id']}:${body.length}` } }))
  const post = safeWebhookTransport({ resolveTarget: targetResolver(resolver, ['127.0.0.1']), connectTimeoutMs: 1000, idleTimeoutMs: 1000, totalTimeoutMs: 1000 })
  t.match(await post.post(web.url('/hook'), '{"a":1}', { 'webhook-id': 'msg_1' }, 1000), { statusCode: 204, error: null })
  t.equal(web.hits.at(-1)!.headers['webhook-id'], 'msg_1')
  t.match(await post.post(web.url('/to-ok'), '{}', {}, 1000), { statusCode: 301 }, 'a redirect is an answer, not followed')
  t.match(await post.post(`http://private.test:${port}/hook`, '{}', {}, 1000), { statusCode: null, error: /non-public/ })
})

t.test("a redirect whose Location, or a feed enclosure that is no URL, fails source_url_invalid: the source's fault, not retried", async (t) => {
  t.same(await failure(http.download(`http://127.0.0.1:${port}/to-garbage`, join(tmp.dir, 'g'), { maxBytes: 1000 })), { errorCode: 'source_url_invalid', retriable: false })
  const sources = new Sources({ http, feeds: fastXmlPodcastFeedParser, videoSite: null as never, directoryBaseUrl: '', maxFeedBytes: 100_000, maxTranscriptBytes: 0 })
  const ctx = { workDir: tmp.dir, maxBytes: 1000, signal: new AbortController().signal, progress: () => {} }
  t.same(await failure(sources.fetch('podcast-rss', `http://127.0.0.1:${port}/feed.rss`, ctx)), { errorCode: 'source_url_invalid', retriable: false })
})
