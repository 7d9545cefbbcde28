// Every way an import fails ends in `failed` with its errorCode, and the credits come back
// (released before the price was captured, refunded after), as the ledger and its auditor show.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { testService, staticResolver, PUBLIC_HOSTS } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { speech } from './support/speech.ts'
import { audit, createImport, dialogue, startAsrServer, waitForNote, json } from './support/pipeline.ts'
import { usageStream } from '../domain/usage/usage.ts'
import { PRICES } from '../domain/credits/prices.ts'

const tmp = tempDir('pipeline-fail-')
t.teardown(tmp.remove)
const mp3Bytes = await readFile(await dialogue(tmp.dir))
const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)
const web = await startHttpServer({
  '/talk.mp3': { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } },
  '/gone.mp3': { status: 404, body: 'no' },
  '/page.mp3': { body: '<!doctype html><html><body>a web page</body></html>', headers: { 'content-type': 'audio/mpeg' } },
  '/noise.mp3': { body: Buffer.from('this is plain text pretending to be an mp3 file'.repeat(20)), headers: { 'content-type': 'audio/mpeg' } },
  '/redirect-private.mp3': { status: 302, headers: { location: 'http://intranet.example.org/secret.mp3' } },
  '/redirect-rebind.mp3': { status: 301, headers: { location: 'http://rebind.example.org/a.mp3' } },
  '/busy.mp3': { status: 503, body: 'busy' },
})
t.teardown(web.close)

const s = await testService({
  workers: true,
  resolver: staticResolver({ ...PUBLIC_HOSTS, 'rebind.example.org': ['127.0.0.1', '10.9.9.9'] }),
  env: {
    IMPORT_ALLOW_HOSTS: '127.0.0.1',
    ASR_BASE_URL: asr.baseUrl,
    JOB_POLL_MS: '20',
    JOB_PROGRESS_INTERVAL_MS: '20',
    JOB_LEASE_MS: '5000',
    JOB_BACKOFF_BASE_MS: '30',
    JOB_MAX_ATTEMPTS: '3',
    IMPORT_MAX_BYTES: '2000000',
    YTDLP_PATH: '/nonexistent/yt-dlp',
  },
})
t.teardown(s.close)

async function failsWith(t: any, audioUrl: string, errorCode: string, expectBalance = 5000) {
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'failed', errorCode, progress: null }, audioUrl)
  const { result, events } = await audit(s, a.accountId)
  t.ok(result.ok, 'the auditor agrees with the ledger')
  t.equal(result.balance, expectBalance, 'the credits came back')
  return { note, events, accountId: a.accountId, noteId }
}

t.test('a link that answers 404 fails with source_not_found; the hold is released', async (t) => {
  const { events } = await failsWith(t, web.url('/gone.mp3'), 'source_not_found')
  t.ok(events.some((e) => e.type === 'CreditsReleased'))
})

t.test('bytes that are not media are refused whatever the extension and content type say', async (t) => {
  await failsWith(t, web.url('/page.mp3'), 'unsupported_media')
  await failsWith(t, web.url('/noise.mp3'), 'unsupported_media')
})

t.test('a redirect to a private address, or to a name that also resolves to one, is refused at download time', async (t) => {
  await failsWith(t, web.url('/redirect-private.mp3'), 'source_blocked')
  await failsWith(t, web.url('/redirect-rebind.mp3'), 'source_blocked')
})

t.test('a file over the size cap fails with source_too_large', async (t) => {
  web.routes.set('/huge.mp3', { body: Buffer.concat([mp3Bytes, Buffer.alloc(2_100_000)]), headers: { 'content-type': 'audio/mpeg' } })
  await failsWith(t, web.url('/huge.mp3'), 'source_too_large')
})

t.test('a server that keeps failing is retried with backoff up to the attempt limit, then download_failed', async (t) => {
  const before = web.count('/busy.mp3')
  const { note } = await failsWith(t, web.url('/busy.mp3'), 'download_failed')
  t.equal(web.count('/busy.mp3') - before, 3, 'three attempts (JOB_MAX_ATTEMPTS)')
  t.ok(note)
})

t.test('when the balance cannot cover 50 credits per started minute, the note fails with insufficient_credits and the hold is released', async (t) => {
  const pad = await speech(tmp.dir, 'padded', [{ text: 'Just a short sentence.', voice: 'en' }], { gapSeconds: 0 })
  // Stretch to 61 s with silence so the price is two minutes.
  const { execFile } = await import('node:child_process')
  const { ffmpegPath } = await import('../adapters/ffmpeg/mediaTool.ts')
  const out = `${tmp.dir}/61s.mp3`
  await new Promise<void>((res, rej) => execFile(ffmpegPath(), ['-y', '-hide_banner', '-i', pad, '-af', `apad=whole_len=${61 * 22050}`, '-c:a', 'libmp3lame', out], (e) => (e ? rej(e) : res())))
  web.routes.set('/61s.mp3', { body: await readFile(out), headers: { 'content-type': 'audio/mpeg' } })
  const a = await s.account('pro')
  await s.services.credits.charge(a.accountId, { operation: PRICES.clip.operation, cost: 4910 } /* drained by clips: a priced charge the auditor accepts */)
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/61s.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'failed', errorCode: 'insufficient_credits', durationSeconds: 61 })
  const { result, events } = await audit(s, a.accountId)
  t.ok(result.ok)
  t.equal(result.balance, 90, 'back to the balance before the import')
  t.match(events.at(-1), { type: 'CreditsReleased', data: { amount: 50, noteId } })

  // With enough credits the same audio costs 100.
  const b = await s.account('pro')
  const ok = await createImport(s, b.headers, { audioUrl: web.url('/61s.mp3') })
  t.match((await waitForNote(s, b.headers, ok)).note, { status: 'ready', durationSeconds: 61 })
  t.equal((await audit(s, b.accountId)).result.balance, 4900)
})

t.test('a video-site link without yt-dlp installed fails with videosite_unavailable', async (t) => {
  await failsWith(t, 'https://www.youtube.com/watch?v=abc123', 'videosite_unavailable')
})

t.test('when the engine keeps failing while the price is held, the note fails with asr_failed and the hold is released, nothing captured', async (t) => {
  asr.failNext(3)
  const { events, noteId } = await failsWith(t, web.url('/talk.mp3'), 'asr_failed')
  t.same(
    events.filter((e) => ['CreditsReserved', 'CreditsHoldExtended', 'CreditsCaptured', 'CreditsReleased', 'CreditsRefunded'].includes(e.type)).map((e) => [e.type, e.data.noteId]),
    [
      ['CreditsReserved', noteId],
      ['CreditsReleased', noteId],
    ],
  )
})

t.test('a passing engine failure is retried and the note still becomes ready, charged once', async (t) => {
  asr.failNext(1)
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  const { note, progress } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready' })
  t.ok(progress.some((p: any) => p.attempt === 2), 'the second attempt was visible')
  const { result, events } = await audit(s, a.accountId)
  t.equal(result.balance, 4950)
  t.equal(events.filter((e) => e.type === 'CreditsCaptured').length, 1)
})

t.test('an upload whose transcription fails gives its reserved minutes back', async (t) => {
  asr.failNext(3)
  const a = await s.account('pro')
  const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify({ filename: 'x.mp3', contentType: 'audio/mpeg' }) })
  const { noteId, upload } = r.json()
  const u = new URL(upload.url)
  await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: upload.headers, payload: mp3Bytes })
  t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })).statusCode, 202)
  t.match((await waitForNote(s, a.headers, noteId)).note, { status: 'failed', errorCode: 'asr_failed' })
  const settled = (await s.services.events.readStream(`note-${noteId}`)).events.at(-1)!
  const minutes = await s.services.events.readStream(usageStream.of(a.accountId))
  t.same(
    minutes.events.filter((e) => e.type.startsWith('Minutes')).map((e) => [e.type, (e.data as { usedAfter: number }).usedAfter]),
    [
      ['MinutesReserved', 1],
      ['MinutesReleased', 0],
    ],
  )
  t.match(settled, { type: 'TranscriptionSettled', data: { credits: 'none', minutesReleased: true } })
})
