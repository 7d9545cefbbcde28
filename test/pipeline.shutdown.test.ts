// SIGTERM while a transcription runs: `npm start` (a real child process) stops within a few
// seconds, hands the running attempt back and says so; after a restart the note completes,
// charged exactly once (the auditor agrees). And a server without a speech model warns at start.
// Issue 16, items 3 and 5.
import t from 'tap'
import type * as Tap from 'tap'
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { join, resolve } from 'node:path'
import { readFile } from 'node:fs/promises'
import { tempDir } from './support/tmp.ts'
import { alive } from './support/processes.ts'
import { freePorts } from './support/mcp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { DIALOGUE, dialogue, startAsrServer } from './support/pipeline.ts'
import { speech } from './support/speech.ts'
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fetchTinyModel } from '../scripts/whisperModel.ts'
import { embeddedEnv } from './support/embeddedEnv.ts'

const tmp = tempDir('pipeline-shutdown-')
t.teardown(tmp.remove)
const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)
// Real recognition on a shared 2-core machine: more than tap's default 300 s per file.
t.setTimeout(900_000)
const minute = Array.from({ length: 7 }, () => DIALOGUE).flat()
const web = await startHttpServer({
  '/talk.mp3': { body: await readFile(await dialogue(tmp.dir)), headers: { 'content-type': 'audio/mpeg' } },
  '/minute.mp3': { body: await readFile(await speech(tmp.dir, 'minute', minute)), headers: { 'content-type': 'audio/mpeg' } },
})
t.teardown(web.close)

interface Child {
  proc: ChildProcess
  out: () => string
  exited: Promise<number | string | null>
}

async function start(env: Record<string, string>, ready: RegExp): Promise<Child> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { env: { ...embeddedEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  proc.stdout!.on('data', (d) => (out += d))
  proc.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | string | null>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal)))
  t.teardown(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
  })
  // Generous: the first start builds the dashboard, on a machine other work may saturate.
  const deadline = Date.now() + 180_000
  while (!ready.test(out)) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return { proc, out: () => out, exited }
}

const until = async <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const [port, mcpPort] = await freePorts(2)
const base = (e: Record<string, string>) => `http://127.0.0.1:${e.PORT}`
const env = {
  DATA_DIR: join(tmp.dir, 'data'),
  PORT: String(port),
  MCP_PORT: String(mcpPort),
  LOG_LEVEL: 'warn',
  RATE_LIMIT_MAX: '100000',
  ASR_BASE_URL: asr.baseUrl,
  IMPORT_ALLOW_HOSTS: '127.0.0.1',
  // No speaker model to fetch: the test is about stopping, not speakers.
  SPEAKER_EMBEDDING_MODEL: join(tmp.dir, 'no-speaker-model.onnx'),
  JOB_POLL_MS: '50',
  JOB_PROGRESS_INTERVAL_MS: '50',
  // A lease far longer than the test: only the hand-back lets the restarted worker in quickly.
  JOB_LEASE_MS: '600000',
}

/** Children of a process (the local engine's Python process, ffmpeg...). */
const childrenOf = async (pid: number): Promise<number[]> =>
  new Promise((resolve) => execFile('ps', ['-o', 'pid=', '--ppid', String(pid)], (_, out) => resolve(String(out ?? '').split('\n').map((l) => Number(l.trim())).filter((n) => n > 0))))

/**
 * npm start with a transcription of `path` running: SIGTERM, then a restart that completes it.
 * `held`: the remote engine holds its answer until the first process is gone.
 */
async function sigtermDuringTranscription(t: Tap.Test, env: Record<string, string>, path: string, held: boolean) {
  const first = await start(env, /API key:\s*\n\s*nk_\S+/)
  const key = /nk_[A-Za-z0-9_-]+/.exec(first.out())![0]
  const accountId = /demo account (\S+) \(plan pro\)/.exec(first.out())![1]!
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const hold = held ? asr.holdRequests() : null
  const created = await fetch(`${base(env)}/v1/notes`, { method: 'POST', headers, body: JSON.stringify({ audioUrl: web.url(path) }) })
  t.equal(created.status, 202)
  const { noteId } = (await created.json()) as { noteId: string }
  await hold?.seen
  const note = async () => (await (await fetch(`${base(env)}/v1/notes/${noteId}`, { headers })).json()) as { status: string; progress: { stage: string; attempt: number } | null }
  await until('the transcribing stage', async () => (await note()).progress?.stage === 'transcribing', 180_000)
  const helpers = await childrenOf(first.proc.pid!)

  const sent = Date.now()
  first.proc.kill('SIGTERM')
  const code = await first.exited
  const shutdownMs = Date.now() - sent
  // An in-process engine still finishing its window: the process ends by SIGTERM's own action.
  t.ok(code === 0 || code === 'SIGTERM', `exit 0, or ended by the signal (${code})`)
  t.ok(shutdownMs < 5000, `stopped within 5 s (${shutdownMs} ms)`)
  t.match(first.out(), /SIGTERM: shutting down/)
  t.match(first.out(), new RegExp(`handed back ${noteId} attempt 1`), 'the log says the job was handed back')
  await until('its helper processes to end', async () => helpers.every((pid) => !alive(pid)), 5000)
  t.pass(`no helper process outlives it (${helpers.length} running at SIGTERM)`)
  hold?.release()

  const second = await start({ ...env, SEED_DEMO: '0' }, /listening on/)
  const done = await until('the note to finish', async () => {
    const n = await note()
    return n.status !== 'processing' ? n : null
  }, 300_000)
  t.match(done, { status: 'ready', errorCode: null, errorMessage: null }, JSON.stringify(done))
  second.proc.kill('SIGTERM')
  t.equal(await second.exited, 0)

  const audited = await new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(process.execPath, ['--import', 'tsx', 'scripts/audit-ledger.ts', accountId, '--json'], { env: { ...embeddedEnv(), ...env } }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
    ),
  )
  t.equal(audited.code, 0, audited.stdout)
  const result = JSON.parse(audited.stdout) as { ok: boolean; balance: number; statement: { type: string }[] }
  t.ok(result.ok, 'the auditor agrees with the ledger')
  t.equal(result.statement.filter((l) => l.type === 'CreditsCaptured').length, 1, 'captured once')
  t.equal(result.statement.filter((l) => l.type === 'CreditsRefunded').length, 0)
  return shutdownMs
}

t.test('given a transcription running in npm start (remote engine), when SIGTERM arrives, then the process ends within 5 s and the note completes after a restart, charged once', async (t) => {
  const ms = await sigtermDuringTranscription(t, env, '/talk.mp3', true)
  t.comment(`shutdown under a running transcription (remote engine): ${ms} ms`)
})

t.test('given the local faster-whisper engine (tiny.en) recognizing a minute of speech, when SIGTERM arrives, then the process and its Python process end within 5 s, and the note completes after a restart', async (t) => {
  const [p, m] = await freePorts(2)
  const { ASR_BASE_URL: _, ...rest } = env
  const local = { ...rest, DATA_DIR: join(tmp.dir, 'data-local'), PORT: String(p), MCP_PORT: String(m), ASR_ENGINE: 'faster-whisper', WHISPER_MODEL: 'tiny.en', MODELS_DIR: resolve('.ci', 'models') }
  const ms = await sigtermDuringTranscription(t, local, '/minute.mp3', false)
  t.comment(`shutdown under a running transcription (faster-whisper tiny.en): ${ms} ms`)
})

t.test('given the in-process whisper.cpp engine (ggml tiny.en) recognizing, when SIGTERM arrives, then the process ends within 5 s, and the note completes after a restart', async (t) => {
  const model = resolve('.ci', 'models', 'ggml-tiny.en.bin')
  if (!existsSync(model)) fetchTinyModel(model)
  const [p, m] = await freePorts(2)
  const { ASR_BASE_URL: _, ...rest } = env
  const local = { ...rest, DATA_DIR: join(tmp.dir, 'data-cpp'), PORT: String(p), MCP_PORT: String(m), ASR_ENGINE: 'whisper', WHISPER_MODEL_PATH: model }
  const ms = await sigtermDuringTranscription(t, local, '/talk.mp3', false)
  t.comment(`shutdown under a running transcription (whisper.cpp tiny.en): ${ms} ms`)
})

t.test('given the local engine without a model, then npm start warns that no speech model is available', async (t) => {
  const [p2, m2] = await freePorts(2)
  const { ASR_BASE_URL: _, ...rest } = env
  const c = await start(
    { ...rest, ASR_BASE_URL: '', DATA_DIR: join(tmp.dir, 'data2'), PORT: String(p2), MCP_PORT: String(m2), ASR_ENGINE: 'whisper', WHISPER_MODEL_PATH: join(tmp.dir, 'no-model.bin'), SEED_DEMO: '0' },
    /speakers:/,
  )
  t.match(c.out(), /WARNING: no speech model is available: no whisper\.cpp model file at .*no-model\.bin/)
  t.match(c.out(), /jobs: +\d+ at once/)
  c.proc.kill('SIGTERM')
  t.equal(await c.exited, 0)
})

t.test('given npm start fetching the speech runtime on its first start, when SIGTERM arrives, then it exits leaving no pip running, no half-installed runtime, and no missing-model warning', async (t) => {
  // python3 stands in: the version check answers, pip runs until it is killed (and says its pid).
  const python = join(tmp.dir, 'python3')
  const pips = join(tmp.dir, 'pips.log')
  writeFileSync(python, `#!/bin/sh\n[ "$1" = -c ] && { echo 3.11.7; exit 0; }\necho $$ >> '${pips}'\nexec sleep 300\n`)
  chmodSync(python, 0o755)
  const [p, m] = await freePorts(2)
  const { ASR_BASE_URL: _, ...rest } = env
  const dataDir = join(tmp.dir, 'data-fetch')
  const c = await start({ ...rest, DATA_DIR: dataDir, PORT: String(p), MCP_PORT: String(m), ASR_ENGINE: 'faster-whisper', ASR_PYTHON: python, SEED_DEMO: '0' }, /speech engine: installing/)
  // The speech runtime and the diarizer's models are both fetched with this Python: one pip
  // each may be running, in either order; every one of them must end with the service.
  const pipPids = () => (existsSync(pips) ? readFileSync(pips, 'utf8').split('\n').map(Number).filter((n) => n > 0) : [])
  await until('pip running', async () => pipPids().length > 0)
  t.teardown(() => pipPids().forEach((pid) => alive(pid) && process.kill(pid, 'SIGKILL')))
  c.proc.kill('SIGTERM')
  t.equal(await c.exited, 0)
  t.same(pipPids().filter(alive), [], 'every pip ended with the service')
  t.same(readdirSync(join(dataDir, 'models')).filter((f) => f.includes('.partial-')), [], 'no half-installed runtime is left')
  t.notMatch(c.out(), /WARNING: no speech model/, 'a shutdown is not a missing model')
})
