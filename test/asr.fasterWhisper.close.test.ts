// Closing the faster-whisper engine while it prepares or starts: close() ends every process it
// started (pip fetching the runtime, a Python process loading the model) and starts none after
// it, so a stopping service exits instead of waiting on them. A stand-in for python3 makes each
// stage last as long as the test needs: no network, no model, no real recognition.
import t from 'tap'
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fasterWhisperEngine } from '../adapters/ctranslate2/fasterWhisper.ts'
import { ct2ModelDir, runtimeDir } from '../adapters/ctranslate2/provision.ts'
import { isPipelineFailure } from '../ports/pipelineFailure.ts'
import { tempDir } from './support/tmp.ts'
import { alive } from './support/processes.ts'
import { pollUntil } from './support/pollUntil.ts'
import { testService } from './support/service.ts'
import { wavBytes } from './support/media.ts'
import { json } from './support/pipeline.ts'

const tmp = tempDir('asr-fw-close-')
t.teardown(tmp.remove)

// python3 as the engine calls it: `-c` (the version check) answers at once; pip and the worker
// (`-s fasterWhisperWorker.py`: a model that never finishes loading) run until they are killed.
const calls = join(tmp.dir, 'calls.log')
const python = join(tmp.dir, 'python3')
writeFileSync(python, `#!/bin/sh\necho "$$ $1 $2" >> '${calls}'\n[ "$1" = -c ] && { echo 3.11.7; exit 0; }\nexec sleep 300\n`)
chmodSync(python, 0o755)

/** The stand-in's runs so far: pid and what it ran (`pip`, `worker`, `check`). */
const started = () =>
  readFileSync(calls, { encoding: 'utf8', flag: 'a+' }).trim().split('\n').filter(Boolean).map((l) => {
    const [pid, a, b] = l.split(' ')
    return { pid: Number(pid), what: a === '-c' ? 'check' : b === 'pip' ? 'pip' : /fasterWhisperWorker/.test(b ?? '') ? 'worker' : `${a} ${b}` }
  })
const running = () => started().filter((p) => p.what !== 'check' && alive(p.pid))
// Whatever a failing run leaves behind.
t.teardown(() => {
  for (const p of running()) process.kill(p.pid, 'SIGKILL')
})

const engine = (modelsDir: string) => fasterWhisperEngine({ model: 'base', modelsDir, python, threads: 1, computeType: 'int8', beamSize: 1 })
const request = { wavPath: join(tmp.dir, 'none.wav'), durationSeconds: 2, language: null, workDir: tmp.dir }
/** A settled transcription: its error (null when it answered). */
const outcome = (p: Promise<unknown>) => {
  const o: { settled: boolean; err: unknown } = { settled: false, err: null }
  p.then(
    () => (o.settled = true),
    (err: unknown) => Object.assign(o, { settled: true, err }),
  )
  return o
}
/** A runtime and a model "on disk", so that the engine goes straight to starting its process. */
function installed(name: string): string {
  const dir = join(tmp.dir, name)
  mkdirSync(join(runtimeDir(dir), 'faster_whisper'), { recursive: true })
  mkdirSync(ct2ModelDir(dir, 'base'), { recursive: true })
  writeFileSync(join(ct2ModelDir(dir, 'base'), 'model.bin'), '')
  return dir
}

t.beforeEach(() => writeFileSync(calls, ''))

t.test('given the engine fetching its runtime with pip, when it is closed, then pip has ended by the time close resolves, the request fails asr_failed, and nothing says the engine is unavailable', async (t) => {
  const e = engine(join(tmp.dir, 'empty-models'))
  const lines: string[] = []
  const prepared = e.prepare!((l) => lines.push(l))
  const job = outcome(e.transcribe(request))
  const pip = await pollUntil('pip started', () => started().find((p) => p.what === 'pip'), 30_000)
  await e.close!()
  t.notOk(alive(pip.pid), 'pip is no longer running')
  await pollUntil('the request settled', () => job.settled, 10_000)
  t.ok(isPipelineFailure(job.err) && job.err.errorCode === 'asr_failed', String(job.err))
  await prepared
  t.same(lines.filter((l) => /unavailable/.test(l)), [], 'a close is not a missing engine')
  t.same(running(), [], 'and no process was started after close')
})

t.test('given a request that has not yet started its Python process, when the engine is closed at once, then no process starts and the request fails', async (t) => {
  const e = engine(installed('models-a'))
  const job = outcome(e.transcribe(request))
  await e.close!()
  await pollUntil('the request settled', () => job.settled, 10_000)
  t.ok(isPipelineFailure(job.err) && job.err.errorCode === 'asr_failed', String(job.err))
  t.same(running(), [], 'no Python process runs')
})

t.test('given the Python process loading its model, when the engine is closed, then it has ended by the time close resolves', async (t) => {
  const e = engine(installed('models-b'))
  const job = outcome(e.transcribe(request))
  const worker = await pollUntil('the worker started', () => started().find((p) => p.what === 'worker'), 30_000)
  await e.close!()
  t.notOk(alive(worker.pid), 'the worker is no longer running')
  await pollUntil('the request settled', () => job.settled, 10_000)
  t.ok(isPipelineFailure(job.err), String(job.err))
})

// uploads.expiry.test.ts's hang: the service closed while its finalized upload's job waited on
// the engine's first-use fetch, and the process never ended.
t.test('given the service with its workers, when it is closed while a job waits on the engine fetching its runtime, then close resolves and leaves no process running', async (t) => {
  const s = await testService({ workers: true, env: { ASR_PYTHON: python, MODELS_DIR: join(tmp.dir, 'service-models'), JOB_POLL_MS: '20' } })
  let closed = false
  t.teardown(() => (closed ? undefined : s.close()))
  const a = await s.account('pro')
  const created = (await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify({ filename: 'tone.wav', contentType: 'audio/wav' }) })).json()
  const u = new URL(created.upload.url)
  t.equal((await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'audio/wav' }, payload: wavBytes(2) })).statusCode, 200)
  t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${created.noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })).statusCode, 202)
  const pip = await pollUntil('the job reached the engine, which runs pip', () => started().find((p) => p.what === 'pip'), 60_000)
  await s.close()
  closed = true
  t.notOk(alive(pip.pid), 'pip is no longer running')
  t.same(running(), [], 'no process of the engine runs')
})
