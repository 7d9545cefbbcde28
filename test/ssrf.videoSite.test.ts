// SSRF through the video-site provider (issue 26, item 1): yt-dlp reads a page on a host the
// policy admits (the allowlisted 127.0.0.1:<its port>, so yt-dlp reaches it with or without the
// policy), and the page leads to an internal server on 127.0.0.1 by a redirect
// (301, 302, 307; to 127.0.0.1 and to its IPv4-mapped IPv6 spelling) or names it in its HTML
// (<audio src>, <video><source>), or its media file redirects there. Each fetch fails
// source_blocked and the internal server is never called, so nothing of it can be transcribed.
import t from 'tap'
import { isPipelineFailure } from '../ports/pipelineFailure.ts'
import { startHttpServer } from './support/httpServer.ts'
import { tempDir } from './support/tmp.ts'
import { policedVideoSite } from './support/videoHost.ts'
import { Sources } from '../workers/sources.ts'

const SECRET = 'INTERNAL-ONLY-SECRET'
const internal = await startHttpServer({
  '/secret.mp3': { body: SECRET, headers: { 'content-type': 'audio/mpeg' } },
  '/secret.mp4': { body: SECRET, headers: { 'content-type': 'video/mp4' } },
})
t.teardown(internal.close)
const loopback = `http://127.0.0.1:${internal.port}`
const mapped = `http://[::ffff:7f00:1]:${internal.port}`
const html = (body: string) => ({ body: `<!doctype html><html><head><title>Clip</title></head><body>${body}</body></html>`, headers: { 'content-type': 'text/html' } })
const host = await startHttpServer({
  '/moved': { status: 301, headers: { location: `${mapped}/secret.mp4` } },
  '/found': { status: 302, headers: { location: `${loopback}/secret.mp4` } },
  '/temporary': { status: 307, headers: { location: `${mapped}/secret.mp4` } },
  '/audio-tag': html(`<audio controls src="${loopback}/secret.mp3"></audio>`),
  '/video-source': html(`<video controls><source src="${mapped}/secret.mp4" type="video/mp4"></video>`),
  '/media-redirects': html('<video controls><source src="/media/clip.mp4" type="video/mp4"></video>'),
  '/media/clip.mp4': { status: 302, headers: { location: `${loopback}/secret.mp4` } },
})
t.teardown(host.close)
const site = policedVideoSite([`127.0.0.1:${host.port}`])
const tmp = tempDir('ytdlp-ssrf-')
t.teardown(tmp.remove)

t.test('yt-dlp is installed (.ci/run installs it)', async (t) => {
  t.ok(await site.available())
})

for (const path of ['/moved', '/found', '/temporary', '/audio-tag', '/video-source', '/media-redirects']) {
  t.test(`a video page at ${path} that leads to 127.0.0.1 fails source_blocked; the internal server is never called`, async (t) => {
    const sources = new Sources({ http: null as never, feeds: null as never, videoSite: site, directoryBaseUrl: '', maxFeedBytes: 0, maxTranscriptBytes: 0 })
    const err = await sources
      .fetch('videosite', host.url(path), { workDir: tmp.dir, maxBytes: 10_000_000, signal: new AbortController().signal, progress: () => {} })
      .then(() => null, (e: unknown) => e)
    t.ok(isPipelineFailure(err), String(err))
    t.match(err, { errorCode: 'source_blocked', message: /127\.0\.0\.1|::ffff:7f00:1/ })
    t.notMatch(String((err as Error).message), SECRET)
    t.ok(host.count(path) >= 1, 'the page itself was read')
    t.equal(internal.hits.length, 0, 'the internal server was never called')
  })
}
