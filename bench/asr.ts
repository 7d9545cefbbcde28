// Speech recognition speed, side by side, on the same audio, weights and threads:
//
//   (a) the service end to end: upload (create, PUT, finalize) -> note `ready`, the service in its
//       own process on the default local engine (faster-whisper, Whisper base, int8, greedy),
//       warm (its engine loaded before the clock starts);
//   (b) that engine called directly through its adapter (adapters/ctranslate2/fasterWhisper.ts)
//       on the 16 kHz WAV the pipeline would give it: what (a) costs above this is the service;
//   (c) faster-whisper itself (PyPI, CTranslate2), the engine self-hosted peers run on CPU, in a
//       plain Python script with the same model folder, int8, greedy, same threads: its model
//       load apart, with and without word timestamps (the service always asks for them);
//   (d) whisper.cpp through @fugood/whisper.node (the engine the service used before) on the same
//       weights converted to ggml, for the record (short file only: it is slow);
//   and the throughput of 1 and 2 worker processes on 10 queued notes (API and projections in
//   one process, workers in others, sharing the SQLite event store and MongoDB read models).
//
// Self-contained: it speaks its corpus with espeak-ng (English, texts below) and encodes it with
// the project's ffmpeg; it fetches the runtime and the model like `npm start` (into MODELS_DIR,
// default .ci/models) and starts FerretDB with scripts/servers/ferretdb.sh for the worker runs
// (unless MONGO_URL is set). Run: npx tsx bench/asr.ts
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { cpus } from 'node:os'
import { ffmpegPath, ffmpegMediaTool } from '../adapters/ffmpeg/mediaTool.ts'
import { fasterWhisperEngine } from '../adapters/ctranslate2/fasterWhisper.ts'
import { whisperCppEngine } from '../adapters/whisper/whisperCpp.ts'
import { ct2ModelDir, ensureCt2Model, ensureRuntime } from '../adapters/ctranslate2/provision.ts'
import { convertCt2ToGgml } from '../scripts/whisperModel.ts'
import { envInt, fmtRatio, machine, machineLoad, table, tempDir } from './lib.ts'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '..')
const MODELS_DIR = resolve(process.env.MODELS_DIR || join(ROOT, '.ci', 'models'))
const MODEL = process.env.WHISPER_MODEL || 'base'
const THREADS = envInt('WHISPER_THREADS', 2)
const LONG_SECONDS = envInt('LONG_SECONDS', 600)
const QUEUED = envInt('QUEUED_NOTES', 10)
const REPEAT = envInt('REPEAT', 2)
const SKIP_WHISPER_CPP = process.env.SKIP_WHISPER_CPP === '1'
const tmp = tempDir('asr')
const log = (line: string) => console.log(line)

const TEXTS = [
  'The meeting started at nine with a review of the quarterly numbers. Sales grew by twelve percent, mostly in the northern region, while costs stayed flat. Maria asked whether the new warehouse would open before the summer.',
  'Tom said the contractor needed two more weeks to finish the roof, and that the inspection was booked for the end of May. We agreed to move the product launch to June, so that marketing has time to prepare the campaign.',
  'The support team reported fewer tickets than last month, thanks to the updated help pages. Finally, everyone was reminded to submit their travel expenses by Friday. The next meeting will take place on Tuesday afternoon.',
  'Our hiring plan for the autumn includes two engineers and one designer. The budget allows it if the second quarter ends as forecast. Anna will write the job descriptions and share them with the team next week.',
  'The customer survey shows that people like the new dashboard but find the export menu hard to use. We will test a simpler menu with five customers and decide in two weeks whether to ship it to everyone.',
]

// ---- corpus ---------------------------------------------------------------------------------

async function say(name: string, text: string, voice = 'en-us'): Promise<string> {
  const wav = join(tmp.dir, `${name}.raw.wav`)
  await run('espeak-ng', ['-v', voice, '-s', '165', '-w', wav, text])
  return wav
}

/** Concatenates WAVs with 0.8 s pauses and encodes MP3 (what users upload) and 16 kHz WAV (what the engine reads). */
async function compose(name: string, parts: string[], maxSeconds?: number): Promise<{ mp3: string; wav: string; seconds: number }> {
  const list = join(tmp.dir, `${name}.txt`)
  const pause = join(tmp.dir, 'pause.wav')
  if (!existsSync(pause)) await run(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'anullsrc=r=22050:cl=mono', '-t', '0.8', pause])
  writeFileSync(list, [pause, ...parts.flatMap((p) => [p, pause])].map((p) => `file '${p}'`).join('\n'))
  const mp3 = join(tmp.dir, `${name}.mp3`)
  await run(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-f', 'concat', '-safe', '0', '-i', list, ...(maxSeconds ? ['-t', String(maxSeconds)] : []), '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '64k', mp3])
  const wav = join(tmp.dir, `${name}.16k.wav`)
  await ffmpegMediaTool().toSpeechWav(mp3, wav)
  const seconds = (readFileSync(wav).length - 44) / 32000
  return { mp3, wav, seconds }
}

// ---- the service in child processes -------------------------------------------------------------

interface Proc {
  child: ChildProcess
  out: string[]
  waitFor(re: RegExp, timeoutMs: number): Promise<RegExpExecArray>
}

function startProcess(env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'start.ts')], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const out: string[] = []
  const waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = []
  const onData = (d: Buffer) => {
    for (const line of d.toString().split('\n')) {
      if (!line) continue
      out.push(line)
      if (process.env.VERBOSE) console.log(`    | ${line}`)
      for (const w of [...waiters]) {
        const m = w.re.exec(line)
        if (m) (waiters.splice(waiters.indexOf(w), 1), w.resolve(m))
      }
    }
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  return {
    child,
    out,
    waitFor(re, timeoutMs) {
      for (const line of out) {
        const m = re.exec(line)
        if (m) return Promise.resolve(m)
      }
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${re} in:\n${out.slice(-20).join('\n')}`)), timeoutMs)
        waiters.push({ re, resolve: (m) => (clearTimeout(t), resolve(m)) })
      })
    },
  }
}

async function stopProcess(p: Proc) {
  if (p.child.exitCode !== null) return
  const exited = new Promise((r) => p.child.once('exit', r))
  p.child.kill('SIGTERM')
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))])
  if (p.child.exitCode === null) p.child.kill('SIGKILL')
}

interface Service {
  base: string
  key: string
  procs: Proc[]
  close(): Promise<void>
}

let nextPort = 3900 + Math.floor(Math.random() * 300) * 2

/** API + projections (+ workers when `workerProcesses` is 0) in one process, and that many worker processes. */
async function startServiceProcesses(workerProcesses: number, threads: number, mongoUrl: string | null, extra: Record<string, string> = {}): Promise<Service> {
  const port = nextPort
  nextPort += 2
  const dataDir = join(tmp.dir, `data-${port}`)
  const common: Record<string, string> = { DATA_DIR: dataDir, MODELS_DIR, WHISPER_MODEL: MODEL, WHISPER_THREADS: String(threads), JOB_POLL_MS: '100', LOG_LEVEL: 'warn', ...(mongoUrl ? { MONGO_URL: mongoUrl, MONGO_DB: `bench_asr_${port}` } : {}), ...extra }
  const api = startProcess({ ...common, PORT: String(port), MCP_PORT: String(port + 1), ROLES: workerProcesses === 0 ? 'api,projections,workers' : 'api,projections' })
  const key = (await api.waitFor(/(nk_[A-Za-z0-9_-]+)/, 120_000))[1]!
  const procs = [api]
  for (let i = 0; i < workerProcesses; i++) procs.push(startProcess({ ...common, ROLES: 'workers' }))
  // Warm: every engine has loaded its model before the clock starts.
  for (const p of workerProcesses === 0 ? [api] : procs.slice(1)) {
    await p.waitFor(/speech: +(faster-whisper .*|not available.*)/, 600_000).then((m) => {
      if (/not available/.test(m[1]!)) throw new Error(m[1])
    })
    // The diarizer's models (speech activity, and speakers unless DIARIZATION=off) loaded too.
    await p.waitFor(/speakers: .* on onnxruntime|the diarizer is not available/, 600_000)
  }
  return { base: `http://127.0.0.1:${port}`, key, procs, close: async () => void (await Promise.all(procs.map(stopProcess))) }
}

async function api(s: Service, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${s.base}${path}`, { method, headers: { authorization: `Bearer ${s.key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) })
  const json = await res.json().catch(() => null)
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

/** Create, PUT, finalize: returns the note id. */
async function upload(s: Service, mp3: string): Promise<string> {
  const bytes = readFileSync(mp3)
  const created = await api(s, 'POST', '/v1/notes', { filename: 'bench.mp3', contentType: 'audio/mpeg', fileSizeBytes: bytes.length })
  const put = await fetch(created.upload.url, { method: 'PUT', headers: created.upload.headers, body: bytes })
  if (put.status >= 300) throw new Error(`PUT ${put.status}`)
  await api(s, 'POST', `/v1/notes/${created.noteId}/finalize`, {})
  return created.noteId
}

async function waitReady(s: Service, noteId: string, timeoutMs = 1_800_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    const n = await api(s, 'GET', `/v1/notes/${noteId}`)
    if (n.status === 'ready') return
    if (n.status === 'failed') throw new Error(`note ${noteId} failed: ${n.errorCode} ${n.errorMessage ?? ''}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`note ${noteId} not ready in time`)
}

// ---- faster-whisper itself ----------------------------------------------------------------------

const FW_SCRIPT = `
import json, sys, time, resource
from faster_whisper import WhisperModel
model_dir, threads, files, words = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(','), sys.argv[4] == '1'
t0 = time.time()
m = WhisperModel(model_dir, device='cpu', compute_type='int8', cpu_threads=threads, num_workers=1)
load = time.time() - t0
out = []
for f in files:
    t0 = time.time(); c0 = time.process_time()
    segs, info = m.transcribe(f, beam_size=1, best_of=1, word_timestamps=words, vad_filter=False)
    text = ' '.join(s.text for s in segs)
    out.append({'file': f, 'seconds': time.time() - t0, 'cpu': time.process_time() - c0, 'chars': len(text)})
print(json.dumps({'load': load, 'runs': out}))
`

async function fasterWhisperDirect(runtime: string, modelDir: string, files: string[], words: boolean): Promise<{ load: number; runs: { file: string; seconds: number }[] }> {
  const script = join(tmp.dir, 'fw.py')
  writeFileSync(script, FW_SCRIPT)
  const { stdout } = await run('python3', ['-s', script, modelDir, String(THREADS), files.join(','), words ? '1' : '0'], { env: { ...process.env, PYTHONPATH: runtime }, maxBuffer: 1 << 24 })
  return JSON.parse(stdout.trim().split('\n').at(-1)!)
}

// ---- main -----------------------------------------------------------------------------------

const best = (xs: number[]) => Math.min(...xs)

async function main() {
  console.log(`bench/asr.ts — ${machine()}`)
  console.log(`start: ${machineLoad()}`)
  console.log(`uptime: ${execFileSync('uptime').toString().trim()}`)
  console.log(`CPU flags: ${(/flags\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '').split(' ').filter((f) => /^(avx|avx2|avx512f|avx512_vnni|fma|f16c|sse4_2)$/.test(f)).join(' ')}`)
  console.log(`model whisper-${MODEL}, ${THREADS} threads, int8, greedy; REPEAT=${REPEAT}, LONG_SECONDS=${LONG_SECONDS}, QUEUED_NOTES=${QUEUED}`)

  // What npm start fetches, the same way.
  const runtime = await ensureRuntime({ modelsDir: MODELS_DIR, python: 'python3', log })
  const modelDir = await ensureCt2Model(MODEL, { modelsDir: MODELS_DIR, python: 'python3', log })

  console.log('corpus: speaking it with espeak-ng…')
  const parts = await Promise.all(TEXTS.map((text, i) => say(`p${i}`, text)))
  const short = await compose('short', parts.slice(0, 3))
  const manyParts = Array.from({ length: Math.ceil(LONG_SECONDS / 12) + 1 }, (_, i) => parts[i % parts.length]!)
  const long = await compose('long', manyParts, LONG_SECONDS)
  const queued = await Promise.all(Array.from({ length: QUEUED }, (_, i) => compose(`q${i}`, [parts[i % parts.length]!, parts[(i + 1) % parts.length]!])))
  console.log(`  short ${short.seconds.toFixed(1)} s, long ${long.seconds.toFixed(1)} s, ${QUEUED} queued notes of ~${queued[0]!.seconds.toFixed(1)} s`)

  const rows: (string | number)[][] = []
  const rtf = (audio: number, secs: number) => `${(audio / secs).toFixed(1)}x`
  const results: Record<string, Record<'short' | 'long', number>> = {}
  const record = (name: string, which: 'short' | 'long', secs: number) => {
    ;(results[name] ??= { short: NaN, long: NaN })[which] = secs
    console.log(`  ${name}, ${which}: ${secs.toFixed(2)} s (${rtf(which === 'short' ? short.seconds : long.seconds, secs)} real time)`)
  }

  if (process.env.ONLY_WORKERS !== '1') await single()
  if (process.env.SKIP_WORKERS !== '1') await workers()

  async function single() {
  // (c) faster-whisper itself, first and last, the best of each (ONLY_SERVICE=1: skipped, with (d))
  for (const words of process.env.ONLY_SERVICE === '1' ? [] : [false, true]) {
    const name = `(c) faster-whisper ${words ? 'with' : 'without'} word timestamps`
    const runs = [] as number[][]
    for (let i = 0; i < REPEAT; i++) {
      const r = await fasterWhisperDirect(runtime, modelDir, [short.wav, long.wav], words)
      runs.push(r.runs.map((x) => x.seconds))
      if (i === 0) console.log(`  ${name}: model load ${r.load.toFixed(2)} s`)
    }
    record(name, 'short', best(runs.map((r) => r[0]!)))
    record(name, 'long', best(runs.map((r) => r[1]!)))
  }

  // (b) the engine through the service's adapter
  {
    const engine = fasterWhisperEngine({ model: MODEL, modelsDir: MODELS_DIR, python: 'python3', threads: THREADS, computeType: 'int8', beamSize: 1 })
    const st = await engine.prepare!(log)
    console.log(`  engine: ${st.summary}`)
    for (const [which, file] of [['short', short], ['long', long]] as const) {
      const times: number[] = []
      for (let i = 0; i < REPEAT; i++) {
        const t0 = performance.now()
        await engine.transcribe({ wavPath: file.wav, durationSeconds: file.seconds, language: null, workDir: tmp.dir })
        times.push((performance.now() - t0) / 1000)
      }
      record('(b) engine direct (adapter)', which, best(times))
    }
    await engine.close!()
  }

  // (a) the service end to end, one process (the default `npm start`, speakers diarized), and
  // (a0) the same with DIARIZATION=0: what the service adds to recognition alone, as (b) measures it.
  for (const [label, extra] of [
    ['(a) service end to end (upload -> ready)', {}],
    ['(a0) service, diarization off', { DIARIZATION: 'off' }],
  ] as const) {
    const s = await startServiceProcesses(0, THREADS, null, extra)
    try {
      for (const [which, file] of [['short', short], ['long', long]] as const) {
        const times: number[] = []
        for (let i = 0; i < REPEAT; i++) {
          const t0 = performance.now()
          await waitReady(s, await upload(s, file.mp3))
          times.push((performance.now() - t0) / 1000)
        }
        record(label, which, best(times))
      }
    } finally {
      await s.close()
    }
  }

  // (d) whisper.cpp through @fugood/whisper.node on the same weights in ggml (short only)
  if (!SKIP_WHISPER_CPP && process.env.ONLY_SERVICE !== '1') {
    const ggml = join(MODELS_DIR, `ggml-${MODEL}.bin`)
    if (!existsSync(ggml)) convertCt2ToGgml(ct2ModelDir(MODELS_DIR, MODEL), ggml)
    const engine = whisperCppEngine({ modelPath: ggml, threads: THREADS })
    const second = join(tmp.dir, 'second.wav')
    await run(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-i', short.wav, '-t', '1', second])
    await engine.transcribe({ wavPath: second, durationSeconds: 1, language: 'en', workDir: tmp.dir }) // loads the model
    const t0 = performance.now()
    await engine.transcribe({ wavPath: short.wav, durationSeconds: short.seconds, language: 'en', workDir: tmp.dir })
    record('(d) whisper.cpp via @fugood/whisper.node (old engine)', 'short', (performance.now() - t0) / 1000)
  }

  const ref = results['(c) faster-whisper without word timestamps'] ?? { short: NaN, long: NaN }
  const refWords = results['(c) faster-whisper with word timestamps'] ?? { short: NaN, long: NaN }
  const direct = results['(b) engine direct (adapter)']!
  for (const [name, r] of Object.entries(results)) {
    rows.push([
      name,
      `${r.short.toFixed(2)} s`,
      rtf(short.seconds, r.short),
      fmtRatio(ref.short / r.short),
      Number.isNaN(r.long) ? '–' : `${r.long.toFixed(1)} s`,
      Number.isNaN(r.long) ? '–' : rtf(long.seconds, r.long),
      Number.isNaN(r.long) ? '–' : fmtRatio(ref.long / r.long),
      Number.isNaN(r.long) ? '–' : fmtRatio(refWords.long / r.long),
    ])
  }
  console.log(`\nSame audio, model whisper-${MODEL}, int8, greedy, ${THREADS} threads; best of ${REPEAT} (the faster-whisper model load is not counted)`)
  table(['', `short ${short.seconds.toFixed(0)} s`, 'x real time', 'vs (c) no words', `long ${long.seconds.toFixed(0)} s`, 'x real time', 'vs (c) no words', 'vs (c) words'], rows)
  const a = results['(a) service end to end (upload -> ready)']!
  console.log(`service overhead over its engine: short ${(((a.short - direct.short) / direct.short) * 100).toFixed(1)} %, long ${(((a.long - direct.long) / direct.long) * 100).toFixed(1)} %`)
  const a0 = results['(a0) service, diarization off']
  if (a0) console.log(`with diarization off: short ${(((a0.short - direct.short) / direct.short) * 100).toFixed(1)} %, long ${(((a0.long - direct.long) / direct.long) * 100).toFixed(1)} %`)
  if (a0) console.log(`diarization on against off: short ${(((a.short - a0.short) / a0.short) * 100).toFixed(1)} %, long ${(((a.long - a0.long) / a0.long) * 100).toFixed(1)} %`)

  }

  // Throughput: 1 vs 2 worker processes on queued notes
  async function workers() {
  let mongoUrl = process.env.MONGO_URL || null
  let stopMongo = async () => {}
  if (!mongoUrl) {
    const line = execFileSync('bash', [join(ROOT, 'scripts', 'servers', 'ferretdb.sh'), 'start'], { cwd: ROOT, encoding: 'utf8' }).trim()
    mongoUrl = line.replace(/^MONGO_URL=/, '')
    stopMongo = async () => void execFileSync('bash', [join(ROOT, 'scripts', 'servers', 'ferretdb.sh'), 'stop'], { cwd: ROOT })
  }
  const throughput: (string | number)[][] = []
  const audioTotal = queued.reduce((a, q) => a + q.seconds, 0)
  let one = NaN
  try {
    for (const [workers, threads] of [[1, THREADS], [2, Math.max(1, Math.floor(THREADS / 2))], [2, THREADS]] as const) {
      const s = await startServiceProcesses(workers, threads, mongoUrl)
      try {
        const t0 = performance.now()
        const ids = []
        for (const q of queued) ids.push(await upload(s, q.mp3))
        for (const id of ids) await waitReady(s, id)
        const secs = (performance.now() - t0) / 1000
        if (workers === 1) one = secs
        console.log(`  ${workers} worker process(es) x ${threads} thread(s): ${secs.toFixed(1)} s for ${QUEUED} notes`)
        throughput.push([`${workers} worker process${workers > 1 ? 'es' : ''} x ${threads} thread${threads > 1 ? 's' : ''}`, `${secs.toFixed(1)} s`, `${((QUEUED * 60) / secs).toFixed(1)} notes/min`, rtf(audioTotal, secs), fmtRatio(one / secs)])
      } finally {
        await s.close()
      }
    }
  } finally {
    await stopMongo()
  }
  console.log(`\n${QUEUED} notes (${audioTotal.toFixed(0)} s of audio) uploaded at once, until all are ready (MongoDB read models, shared SQLite event store)`)
  table(['', 'all ready', 'throughput', 'x real time', 'vs 1 worker'], throughput)
  }
  console.log(`\nend: ${machineLoad()}`)
  console.log(`uptime: ${execFileSync('uptime').toString().trim()}`)
  console.log(`cores: ${cpus().length}`)
}

await main()
  .catch((err) => {
    console.error(err)
    process.exitCode = 1
  })
  .finally(() => tmp.cleanup())
