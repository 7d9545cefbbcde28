// The speech-engine port over whisper.cpp, through @fugood/whisper.node: its prebuilt native
// addon ships in a platform package on the npm registry (@fugood/node-whisper-linux-x64 and
// friends), so nothing is compiled or downloaded at install. That build uses no AVX at all (a
// baseline x86-64 build): about 15x slower than the default engine (faster-whisper) on the same
// weights here (bench/README.md); it stays as the option for ggml models (WHISPER_MODEL_PATH). The model is a ggml file the
// operator provides (WHISPER_MODEL_PATH; README: how to obtain one); without it the note fails
// with `asr_model_missing`. The only file that imports the package.
import { existsSync } from 'node:fs'
import { basename } from 'node:path'
import { createRequire } from 'node:module'
import type { Recognition, SpeechEngine, SpeechEngineStatus, SpeechRequest } from '../../ports/speechEngine.ts'
import { PipelineFailure } from '../../ports/pipelineFailure.ts'

// The package ships its TypeScript sources next to the .d.ts files, and they do not compile under
// this project's settings; the slice of its API used here is typed by hand.
interface WhisperContext {
  transcribeFile(
    path: string,
    options: { language?: string; maxThreads?: number },
  ): { stop(): Promise<void>; promise: Promise<{ language?: string; result: string; segments: { text: string; t0: number; t1: number }[]; isAborted: boolean }> }
  release(): Promise<void>
}
type InitWhisper = (options: { filePath: string; useGpu?: boolean }) => Promise<WhisperContext>
// Loaded on first use: the native addon costs nothing to a process that never transcribes locally.
const initWhisper: InitWhisper = (options) => (createRequire(import.meta.url)('@fugood/whisper.node') as { initWhisper: InitWhisper }).initWhisper(options)

export interface WhisperCppOptions {
  modelPath: string | null
  threads?: number
}

export function whisperCppEngine(options: WhisperCppOptions): SpeechEngine {
  let context: Promise<WhisperContext> | null = null
  // One context runs one transcription at a time; later requests wait their turn.
  let queue: Promise<unknown> = Promise.resolve()
  // Recognitions running on the native threads now.
  let active = 0

  async function load(): Promise<WhisperContext> {
    const path = options.modelPath
    if (!path || !existsSync(path)) {
      throw new PipelineFailure('asr_model_missing', path ? `No whisper.cpp model file at ${path}.` : 'The local speech engine has no model: set WHISPER_MODEL_PATH to a ggml model file.')
    }
    context ??= initWhisper({ filePath: path, useGpu: false }).catch((err: unknown) => {
      context = null
      throw new PipelineFailure('asr_model_invalid', `${path} could not be loaded as a whisper.cpp model: ${(err as Error).message}`)
    })
    return context
  }

  async function run(req: SpeechRequest): Promise<Recognition> {
    const ctx = await load()
    // English-only models (`*.en`) cannot detect a language: they are told English, and refuse another.
    const hint = req.language ? req.language.split('-')[0]!.toLowerCase() : null
    if (hint && englishOnly && hint !== 'en') {
      throw new PipelineFailure('asr_language_unsupported', `The speech model ${modelName} transcribes English only; this note asks for ${req.language}.`)
    }
    const language = hint ?? (englishOnly ? 'en' : 'auto')
    // No `onProgress`: in @fugood/whisper.node 1.1.3 a progress callback can leave the promise
    // unsettled for ever. Its worker thread, once recognition returns, waits on a condition
    // variable until every callback it queued has run on the JS thread; the JS side decrements
    // the count and notifies without holding the mutex (src/WhisperContext.cpp, progress_callback
    // and the wait after whisper_full_parallel), so a last callback (100 %) that lands between the
    // worker's check and its wait is a lost wake-up. Seen in CI: a note stuck at "transcribing
    // 100 %" for 240 s, and the test process unable to exit (its libuv work never completed).
    // The note's progress shows the stage without a percent while whisper.cpp recognizes.
    const job = ctx.transcribeFile(req.wavPath, { language, maxThreads: options.threads ?? 2 })
    const onAbort = () => void job.stop()
    req.signal?.addEventListener('abort', onAbort, { once: true })
    active++
    try {
      const result = await job.promise
      if (result.isAborted) throw new PipelineFailure('asr_failed', 'The transcription was stopped.', true)
      return {
        language: englishOnly ? 'en' : result.language && result.language !== 'auto' ? result.language : null,
        model: modelName,
        segments: result.segments.map((s) => ({ startMs: s.t0, endMs: s.t1, text: s.text, speaker: null, confidence: null, words: null })),
      }
    } catch (err) {
      if (err instanceof PipelineFailure) throw err
      throw new PipelineFailure('asr_failed', `whisper.cpp failed: ${(err as Error).message}`, true)
    } finally {
      active--
      req.signal?.removeEventListener('abort', onAbort)
    }
  }

  const modelName = options.modelPath ? basename(options.modelPath).replace(/\.bin$/, '') : 'none'
  const englishOnly = /\.en$/.test(modelName)
  return {
    engine: 'whisper.cpp',
    provider: 'local',
    model: modelName,
    transcribe(req) {
      const next = queue.then(() => run(req))
      queue = next.catch(() => {})
      return next
    },
    busy: () => active > 0,
    status(): SpeechEngineStatus {
      const summary = `whisper.cpp, model ${modelName}, ${options.threads ?? 2} threads`
      const details = { engine: 'whisper.cpp', model: modelName, threads: options.threads ?? 2 }
      if (!options.modelPath) return { state: 'unavailable', summary, reason: 'no model: set WHISPER_MODEL_PATH to a ggml model file (npm run whisper-model fetches tiny.en)', details }
      if (!existsSync(options.modelPath)) return { state: 'unavailable', summary, reason: `no whisper.cpp model file at ${options.modelPath} (WHISPER_MODEL_PATH)`, details }
      return { state: 'ready', summary, reason: null, details }
    },
  }
}
