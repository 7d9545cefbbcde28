// Imports end to end (spec parts 1-3, 8): a link becomes a ready note with a transcript, through
// real media made here (espeak-ng speech, an MP4 with a subtitle track), a local HTTP server in
// the role of the web, and an OpenAI-compatible transcription server.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { mp4WithSubtitles, speechIntervals } from './support/speech.ts'
import { DIALOGUE, audit, createImport, dialogue, startAsrServer, transcriptOf, waitForNote } from './support/pipeline.ts'

const tmp = tempDir('pipeline-import-')
t.teardown(tmp.remove)

const mp3 = await dialogue(tmp.dir)
const mp3Bytes = await readFile(mp3)
const truth = await speechIntervals(mp3)
const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)
const web = await startHttpServer({ '/talk.mp3': { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } } })
t.teardown(web.close)

const s = await testService({
  workers: true,
  env: {
    IMPORT_ALLOW_HOSTS: '127.0.0.1',
    ASR_BASE_URL: asr.baseUrl,
    ASR_MODEL: 'test-whisper-large',
    JOB_POLL_MS: '20',
    JOB_PROGRESS_INTERVAL_MS: '20',
    JOB_LEASE_MS: '5000',
    JOB_BACKOFF_BASE_MS: '50',
    PODCAST_DIRECTORY_URL: web.url(''),
  },
})
t.teardown(s.close)

t.test('given a direct MP3 link, when the note is polled, then it becomes ready with segments, speakers, words and timings from the audio', async (t) => {
  t.equal(truth.length, 3, 'the test audio has three spoken parts')
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  const { note, progress } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready', errorCode: null, language: 'en', progress: null, origin: 'audio' })
  t.ok(note.durationSeconds >= 5 && note.durationSeconds <= 15, `duration ${note.durationSeconds}`)
  t.ok(progress.length > 0, 'progress was visible while processing')
  t.ok(progress.some((p: any) => p.stage === 'transcribing'), 'a transcribing stage was seen')
  t.match(note.transcript, { fullText: DIALOGUE.map((d) => d.text).join(' '), languagesDetected: ['en'], speakerCount: 2 })

  const tr = (await transcriptOf(s, noteId))!
  t.match(tr, { engine: 'openai-compatible', provider: /^127\.0\.0\.1:\d+$/, model: 'test-whisper-large', language: 'en' })
  t.equal(tr.segments.length, 3)
  t.same(tr.segments.map((x) => x.speakerLabel), ['A', 'B', 'A'], 'speakers from the provider, labelled in order of appearance')
  t.same(tr.segments.map((x) => x.sequence), [0, 1, 2])
  for (const [i, seg] of tr.segments.entries()) {
    t.match(seg, { id: /^[0-9a-f-]{36}$/, text: DIALOGUE[i]!.text, locale: 'en' })
    t.ok(Math.abs(seg.startMs - truth[i]!.startMs) < 400, `segment ${i} starts at ${seg.startMs}, speech at ${truth[i]!.startMs}`)
    t.ok(Math.abs(seg.endMs - truth[i]!.endMs) < 400, `segment ${i} ends at ${seg.endMs}, speech at ${truth[i]!.endMs}`)
    t.ok(seg.words && seg.words.length === DIALOGUE[i]!.text.split(' ').length, 'word timings inside the segment')
    t.ok(seg.words!.every((w) => w.startMs >= seg.startMs - 1 && w.endMs <= seg.endMs + 1))
    t.ok(seg.confidence! > 0 && seg.confidence! <= 1)
  }
  t.same(
    tr.speakers.map((x) => [x.label, x.segmentCount]),
    [
      ['A', 2],
      ['B', 1],
    ],
  )
  t.equal(asr.calls.at(-1)!.filename, 'audio.wav', 'the decoded 16 kHz WAV was sent whole (under the size limit)')

  // 50 credits per started minute: 50 held at create, captured at 50.
  const { events, result } = await audit(s, a.accountId)
  t.ok(result.ok, `auditor verdict: ${result.problems.join('; ')}`)
  t.equal(result.balance, 4950)
  t.match(events.find((e) => e.type === 'CreditsCaptured'), { data: { reserved: 50, cost: 50, noteId } })

  // The downloaded media is kept (counted against storage), so clips can be cut from it.
  const noteEvents = (await s.services.events.readStream(`note-${noteId}`)).events
  t.match(noteEvents.find((e) => e.type === 'NoteAudioStored'), { data: { blobKey: `media/${noteId}`, sizeBytes: mp3Bytes.length, contentType: 'audio/mpeg' } })
  const clip = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/clip?startMs=0&endMs=2000`, headers: a.headers })
  t.equal(clip.statusCode, 200)
  t.equal(clip.headers['content-type'], 'audio/mpeg')
  t.ok(clip.rawPayload.length > 1000)
})

t.test('given a forced language, then the engine is told and the transcript carries it', async (t) => {
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3'), language: 'es-ES', title: 'Reunión' })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready', language: 'es-ES', title: 'Reunión' })
  t.equal(asr.calls.at(-1)!.language, 'es')
  const tr = (await transcriptOf(s, noteId))!
  t.equal(tr.language, 'es-ES')
  t.same(tr.languagesDetected, ['en'], 'what the engine detected is still reported')
  t.equal(tr.segments[0]!.locale, 'es-ES')
})

const VTT = `WEBVTT

00:00:00.500 --> 00:00:03.000
<v Alice Smith>Welcome to the show.</v>

00:00:03.200 --> 00:00:06.000
<v Bob Jones>Glad to be here &amp; ready.</v>

NOTE a comment block

00:00:06.500 --> 00:00:09.000
<v Alice Smith>Let us begin.</v>
`

const feed = (items: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>The Test Show</title><language>en-us</language>
${items}
</channel></rss>`

web.routes.set('/show/ep2.vtt', { body: VTT, headers: { 'content-type': 'text/vtt' } })
web.routes.set('/show/ep1.mp3', { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } })
web.routes.set('/show/ep2.mp3', { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } })
const ITEM1 = `<item><title>Episode one</title><guid isPermaLink="false">ep-1</guid><description>The first episode.</description>
<pubDate>Mon, 06 Jan 2025 10:00:00 GMT</pubDate><enclosure url="${web.url('/show/ep1.mp3')}" type="audio/mpeg" length="${mp3Bytes.length}"/><itunes:duration>00:09</itunes:duration></item>`
const ITEM2 = `<item><title>Episode two</title><guid isPermaLink="false">ep-2</guid><description><![CDATA[<p>The <b>second</b> episode.</p>]]></description>
<pubDate>Mon, 13 Jan 2025 10:00:00 GMT</pubDate><enclosure url="${web.url('/show/ep2.mp3')}" type="audio/mpeg" length="${mp3Bytes.length}"/><itunes:duration>9</itunes:duration>
<podcast:transcript url="${web.url('/show/ep2.html')}" type="text/html"/>
<podcast:transcript url="${web.url('/show/ep2.vtt')}" type="text/vtt" language="en"/></item>`
web.routes.set('/show/feed.xml', { body: feed(ITEM1 + ITEM2), headers: { 'content-type': 'application/rss+xml' } })
web.routes.set('/plain/feed.xml', { body: feed(ITEM1), headers: { 'content-type': 'application/rss+xml' } })

t.test('given an RSS feed whose newest episode publishes a VTT transcript, then it is used: no audio download, no engine, speakers from voice tags', async (t) => {
  const a = await s.account('pro')
  const calls = asr.calls.length
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/show/feed.xml') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready', title: 'Episode two', recordedAt: '2025-01-13T10:00:00.000Z', durationSeconds: 9, origin: 'podcast', language: 'en' })
  t.match(note.description, /second/)
  t.equal(web.count('/show/ep2.mp3'), 0, 'the audio was not downloaded')
  t.equal(asr.calls.length, calls, 'no speech engine was paid for')
  const tr = (await transcriptOf(s, noteId))!
  t.match(tr, { engine: 'published', provider: 'podcast:transcript', model: null })
  t.same(
    tr.segments.map((x) => [x.startMs, x.endMs, x.speakerLabel, x.text]),
    [
      [500, 3000, 'A', 'Welcome to the show.'],
      [3200, 6000, 'B', 'Glad to be here & ready.'],
      [6500, 9000, 'A', 'Let us begin.'],
    ],
  )
  t.same(tr.speakerNames, { A: 'Alice Smith', B: 'Bob Jones' })
  t.equal(tr.segments[0]!.words, null, 'no word timings when the source has none')
  t.equal((await audit(s, a.accountId)).result.balance, 4950)
})

const SRT = `1
00:00:01,000 --> 00:00:04,000
Alice Walker: Welcome back to the show, it is good to have you all here with us.

2
00:00:04,500 --> 00:00:08,000
BOB: Thanks. I have been looking forward to this one for a while.

3
00:00:08,500 --> 00:00:11,000
And there is a lot that we want to talk about today.

4
00:00:11,500 --> 00:00:14,000
Alice Walker: Then let us begin with the budget.
`
web.routes.set('/nolang/ep.srt', { body: SRT, headers: { 'content-type': 'application/x-subrip' } })
// No <language> in the channel, none on the transcript, and a 25-minute episode.
web.routes.set(
  '/nolang/feed.xml',
  {
    body: feed(`<item><title>Long talk</title><guid>long-1</guid><pubDate>Mon, 20 Jan 2025 10:00:00 GMT</pubDate>
<enclosure url="${web.url('/nolang/ep.mp3')}" type="audio/mpeg" length="1"/><itunes:duration>00:25:00</itunes:duration>
<podcast:transcript url="${web.url('/nolang/ep.srt')}" type="application/x-subrip"/></item>`).replace('<language>en-us</language>', ''),
    headers: { 'content-type': 'application/rss+xml' },
  },
)

t.test('given a feed whose SRT transcript names speakers as `Name: ` and gives no language, then the names, the detected language and the flat 50 credits', async (t) => {
  const a = await s.account('pro')
  const calls = asr.calls.length
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/nolang/feed.xml') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready', title: 'Long talk', durationSeconds: 1500, language: 'en' }, 'the language the text is written in')
  t.equal(web.count('/nolang/ep.mp3'), 0, 'the audio was not downloaded')
  t.equal(asr.calls.length, calls, 'no engine ran')
  const tr = (await transcriptOf(s, noteId))!
  t.match(tr, { engine: 'published', provider: 'podcast:transcript', language: 'en', languagesDetected: ['en'] })
  t.same(
    tr.segments.map((x) => [x.speakerLabel, x.text]),
    [
      ['A', 'Welcome back to the show, it is good to have you all here with us.'],
      ['B', 'Thanks. I have been looking forward to this one for a while.'],
      ['B', 'And there is a lot that we want to talk about today.'],
      ['A', 'Then let us begin with the budget.'],
    ],
    'the prefixes became labels and left the text',
  )
  const sp = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers`, headers: a.headers })
  t.equal(sp.statusCode, 200)
  t.match(sp.json().speakers, [
    { label: 'A', name: 'Alice Walker', nameStatus: 'suggested', evidence: [{ source: 'published', quote: 'Alice Walker' }] },
    { label: 'B', name: 'BOB', nameStatus: 'suggested', evidence: [{ source: 'published', quote: 'BOB' }] },
  ])
  const full = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript`, headers: a.headers })
  t.match(full.json().segments[0], { speakerLabel: 'A', speakerName: 'Alice Walker' }, 'segments read with the published names')
  // 25 minutes transcribed by an engine would be 1250; a published transcript is the flat 50.
  const { events, result } = await audit(s, a.accountId)
  t.ok(result.ok, `auditor verdict: ${result.problems.join('; ')}`)
  t.equal(result.balance, 4949, 'the flat 50, and 1 for the transcript read')
  t.match(events.find((e) => e.type === 'CreditsCaptured' && (e.data as { noteId?: string }).noteId === noteId), { data: { cost: 50 } })
})

t.test('given a feed without a published transcript, then the newest episode (or the one the fragment names) is transcribed', async (t) => {
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/plain/feed.xml') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready', title: 'Episode one', recordedAt: '2025-01-06T10:00:00.000Z' })
  t.equal(web.count('/show/ep1.mp3'), 1, 'the enclosure was downloaded')
  t.equal((await transcriptOf(s, noteId))!.engine, 'openai-compatible')

  const older = await createImport(s, a.headers, { audioUrl: `${web.url('/show/feed.xml')}#ep-1` })
  const r = await waitForNote(s, a.headers, older)
  t.match(r.note, { status: 'ready', title: 'Episode one' })

  const missing = await createImport(s, a.headers, { audioUrl: `${web.url('/show/feed.xml')}#ep-9` })
  t.match((await waitForNote(s, a.headers, missing)).note, { status: 'failed', errorCode: 'episode_not_found' })
})

t.test('given a podcast directory link, then its id is looked up, and the feed and episode imported', async (t) => {
  web.routes.set('/lookup', (req) => {
    const q = new URL(req.url!, 'http://x').searchParams
    if (q.get('id') !== '1234567') return { body: JSON.stringify({ resultCount: 0, results: [] }), headers: { 'content-type': 'application/json' } }
    if (q.get('entity') === 'podcastEpisode') {
      return { body: JSON.stringify({ resultCount: 2, results: [{ wrapperType: 'track', kind: 'podcast', feedUrl: web.url('/show/feed.xml') }, { wrapperType: 'podcastEpisode', trackId: 1000601, episodeGuid: 'ep-1' }] }) }
    }
    return { body: JSON.stringify({ resultCount: 1, results: [{ wrapperType: 'track', kind: 'podcast', collectionId: 1234567, feedUrl: web.url('/show/feed.xml') }] }) }
  })
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: 'https://podcasts.apple.com/us/podcast/the-test-show/id1234567' })
  t.match((await waitForNote(s, a.headers, noteId)).note, { status: 'ready', title: 'Episode two', origin: 'podcast' })
  const ep = await createImport(s, a.headers, { audioUrl: 'https://podcasts.apple.com/us/podcast/the-test-show/id1234567?i=1000601' })
  t.match((await waitForNote(s, a.headers, ep)).note, { status: 'ready', title: 'Episode one' })
  const unknown = await createImport(s, a.headers, { audioUrl: 'https://podcasts.apple.com/us/podcast/nothing/id999' })
  const failed = (await waitForNote(s, a.headers, unknown)).note
  t.match(failed, { status: 'failed', errorCode: 'directory_lookup_failed' })
  t.equal((await audit(s, a.accountId)).result.balance, 5000 - 50 - 50, 'the failed lookup cost nothing')
})

t.test('given an MP4 with a muxed subtitle track, then the track is the transcript and the engine is not called', async (t) => {
  const vtt = `WEBVTT

00:00:00.400 --> 00:00:03.500
Good morning and welcome.

00:00:04.000 --> 00:00:07.000
The budget review is finished.
`
  const mp4 = await mp4WithSubtitles(tmp.dir, 'subbed', mp3, vtt)
  web.routes.set('/video/subbed', { body: await readFile(mp4), headers: { 'content-type': 'application/octet-stream' } })
  const a = await s.account('pro')
  const calls = asr.calls.length
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/video/subbed') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready', origin: 'link', language: 'en' })
  t.equal(asr.calls.length, calls)
  const tr = (await transcriptOf(s, noteId))!
  t.match(tr, { engine: 'published', provider: 'subtitle-track' })
  t.same(
    tr.segments.map((x) => [x.startMs, x.endMs, x.text, x.speakerLabel]),
    [
      [400, 3500, 'Good morning and welcome.', null],
      [4000, 7000, 'The budget review is finished.', null],
    ],
  )
})

t.test('given a direct upload, when it is finalized, then the worker transcribes it', async (t) => {
  const a = await s.account('pro')
  const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ filename: 'standup.mp3', contentType: 'audio/mpeg', fileSizeBytes: mp3Bytes.length }) })
  const { noteId, upload } = r.json()
  const u = new URL(upload.url)
  t.equal((await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: upload.headers, payload: mp3Bytes })).statusCode, 200)
  t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, 'content-type': 'application/json' }, payload: '{}' })).statusCode, 202)
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready', sourceType: 'upload', title: 'standup', language: 'en' })
  t.equal((await transcriptOf(s, noteId))!.segments.length, 3)
  t.equal((await audit(s, a.accountId)).result.balance, 5000, 'uploads spend minutes, not credits')
})
