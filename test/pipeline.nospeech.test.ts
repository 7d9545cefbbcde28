// Audio with nothing said: silence fails `no_speech` before any recognition is spent on it, and so
// does audio the engine hears only tags in ("[BLANK_AUDIO]", "(music)"); the captured price is
// refunded by an event (the auditor agrees) and no analysis can run on it. Tags around real
// speech are removed from the transcript.
import t from 'tap'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { wavBytes, wavFromPcm } from './support/media.ts'
import { audit, createImport, startAsrServer, transcriptOf, waitForNote, json } from './support/pipeline.ts'

const tmp = tempDir('pipeline-nospeech-')
t.teardown(tmp.remove)
const silence = wavFromPcm(Buffer.alloc(16_000 * 2 * 75), 16_000) // 75 s: two started minutes are captured
const web = await startHttpServer({
  '/silence.wav': { body: silence, headers: { 'content-type': 'audio/wav' } },
  '/hum.wav': { body: wavBytes(4), headers: { 'content-type': 'audio/wav' } },
})
t.teardown(web.close)
const fast = { IMPORT_ALLOW_HOSTS: '127.0.0.1', JOB_POLL_MS: '20', JOB_PROGRESS_INTERVAL_MS: '20', JOB_LEASE_MS: '10000', JOB_BACKOFF_BASE_MS: '30' }

async function service(t: any, script: { text: string }[]) {
  const asr = await startAsrServer(tmp.dir, script)
  t.teardown(asr.close)
  const s = await testService({ workers: true, env: { ...fast, ASR_BASE_URL: asr.baseUrl } })
  t.teardown(s.close)
  return { s, asr }
}

t.test('silence fails with no_speech before the speech engine is called; the held credits are released', async (t) => {
  const { s, asr } = await service(t, [{ text: 'never said' }])
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/silence.wav') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'failed', errorCode: 'no_speech', transcript: null })
  t.equal(asr.calls.length, 0, 'no recognition was spent on it')
  const { result, events } = await audit(s, a.accountId)
  t.ok(result.ok, 'the auditor agrees with the ledger')
  t.equal(result.balance, 5000, 'every credit came back')
  t.match(events.find((e) => e.type === 'CreditsHoldExtended'), { data: { amount: 100 } }, 'the price had been held (75 s: 100 credits)')
  t.notOk(events.some((e) => e.type === 'CreditsCaptured'), 'never captured (capture happens when the note is ready)')
  t.match(events.find((e) => e.type === 'CreditsReleased'), { data: { amount: 100 } }, 'and the hold was released by an event')
  const analysis = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/analysis`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ template: 'generic' }) })
  t.match({ status: analysis.statusCode, body: analysis.json() }, { status: 409, body: { error: 'note_not_ready' } }, 'no analysis runs (or charges) on it')
  t.equal((await audit(s, a.accountId)).result.balance, 5000)
})

t.test('audio the engine hears only non-speech tags in fails with no_speech, refunded', async (t) => {
  const { s, asr } = await service(t, [{ text: ' [BLANK_AUDIO]' }, { text: '(upbeat music)' }])
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/hum.wav') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'failed', errorCode: 'no_speech' })
  t.equal(asr.calls.length, 1, 'the engine was asked once (no retry: no_speech is final)')
  const { result } = await audit(s, a.accountId)
  t.ok(result.ok)
  t.equal(result.balance, 5000)
})

t.test('tags around speech are removed from the transcript', async (t) => {
  const { s } = await service(t, [{ text: '[Music] Welcome back (applause) to the show. ♪' }])
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/hum.wav') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready' })
  const tr = (await transcriptOf(s, noteId))!
  t.same(tr.segments.map((x) => x.text), ['Welcome back to the show.'])
  t.equal(tr.fullText, 'Welcome back to the show.')
})
