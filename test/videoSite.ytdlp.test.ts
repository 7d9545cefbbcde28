// The yt-dlp adapter against a real yt-dlp (installed by .ci/run from PyPI) and a page served
// here: an HTML5 <video> with a <track> of captions, which yt-dlp's generic extractor reads
// the way it reads a video site's page. Nothing on the internet is reached.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { ytDlpVideoSite } from '../adapters/ytdlp/videoSite.ts'
import { parseVtt } from '../domain/notes/captions.ts'
import { isPipelineFailure } from '../ports/pipelineFailure.ts'
import { startHttpServer } from './support/httpServer.ts'
import { tempDir } from './support/tmp.ts'
import { dialogue } from './support/pipeline.ts'
import { mp4WithSubtitles } from './support/speech.ts'
import { Sources } from '../workers/sources.ts'
import { policedVideoSite, VIDEO_HOST } from './support/videoHost.ts'

const tmp = tempDir('ytdlp-')
t.teardown(tmp.remove)

t.test('without yt-dlp the adapter says so, and the provider fails videosite_unavailable', async (t) => {
  const missing = ytDlpVideoSite({ binary: '/nonexistent/yt-dlp', resolveTarget: async () => ({ ok: false, unresolvable: true, reason: 'unused' }), http: null as never })
  t.equal(await missing.available(), null)
  const err = await missing.fetch('https://www.youtube.com/watch?v=x', tmp.dir, { maxBytes: 1000 }).catch((e: unknown) => e)
  t.ok(isPipelineFailure(err) && err.errorCode === 'videosite_unavailable')
})

t.test('with yt-dlp, a page with a video and captions gives the media, the captions and the title', async (t) => {
  const site = policedVideoSite()
  const version = await site.available()
  t.ok(version, 'yt-dlp is installed (.ci/run installs it)')
  const mp3 = await dialogue(tmp.dir)
  const mp4 = await mp4WithSubtitles(tmp.dir, 'clip', mp3, 'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nx\n')
  const vtt = 'WEBVTT\n\n00:00:00.500 --> 00:00:03.000\nGood morning and welcome.\n\n00:00:04.000 --> 00:00:06.000\nThe budget review is finished.\n'
  const web = await startHttpServer({
    '/watch': {
      body: `<!doctype html><html><head><title>Weekly planning</title><meta property="og:title" content="Weekly planning"></head><body>
<video controls><source src="/media/clip.mp4" type="video/mp4"><track kind="subtitles" srclang="en" src="/media/clip.en.vtt" label="English"></video></body></html>`,
      headers: { 'content-type': 'text/html' },
    },
    '/media/clip.mp4': { body: await readFile(mp4), headers: { 'content-type': 'video/mp4' } },
    '/media/clip.en.vtt': { body: vtt, headers: { 'content-type': 'text/vtt' } },
  })
  t.teardown(web.close)
  const work = tempDir('ytdlp-work-')
  t.teardown(work.remove)
  const page = `http://${VIDEO_HOST}:${web.port}/watch`
  const out = await site.fetch(page, work.dir, { maxBytes: 50_000_000 })
  t.ok(out.mediaPath.includes('media.'), out.mediaPath)
  t.ok((await readFile(out.mediaPath)).length > 1000)
  t.match(out.title, /Weekly planning/)
  t.equal(out.subtitlePaths.length, 1)
  t.same(parseVtt(await readFile(out.subtitlePaths[0]!, 'utf8')).map((c) => c.text), ['Good morning and welcome.', 'The budget review is finished.'])

  // The videosite provider on top: the site's captions become the published transcript.
  const sources = new Sources({ http: null as never, feeds: null as never, videoSite: site, directoryBaseUrl: '', maxFeedBytes: 0, maxTranscriptBytes: 0 })
  const work2 = tempDir('ytdlp-work-')
  t.teardown(work2.remove)
  const stages: string[] = []
  const fetched = await sources.fetch('videosite', page, { workDir: work2.dir, maxBytes: 50_000_000, signal: new AbortController().signal, progress: (s) => stages.push(s) })
  t.match(fetched, { published: { provider: 'videosite-subtitles', language: 'en' }, meta: { title: /Weekly planning/ } })
  t.equal(fetched.published!.cues.length, 2)
  t.ok(fetched.mediaPath)
  t.same(stages, ['downloading'])
})
