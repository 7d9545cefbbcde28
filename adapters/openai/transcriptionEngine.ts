// The speech-engine port over any OpenAI-compatible `POST /v1/audio/transcriptions` (OpenAI,
// Groq, a faster-whisper or whisper.cpp server, ...), configured by ASR_BASE_URL (…/v1),
// ASR_API_KEY, ASR_MODEL. Asks for `verbose_json` with segment and word timestamps. Files over
// the provider's upload limit (ASR_MAX_UPLOAD_BYTES, OpenAI's is 25 MB) are cut into MP3 slices
// that fit, sent one by one, and their times shifted by each slice's offset. Speakers come
// through when the provider returns them on segments (`speaker`), and are never made up.
import { readFile, stat, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { MediaTool } from '../../ports/mediaTool.ts'
import type { Recognition, RecognizedSegment, RecognizedWord, SpeechEngine, SpeechRequest } from '../../ports/speechEngine.ts'
import { PipelineFailure } from '../../ports/pipelineFailure.ts'

export interface OpenAiTranscriptionOptions {
  baseUrl: string
  apiKey: string | null
  model: string
  maxUploadBytes: number
  /** Bit rate of the MP3 slices when a file must be cut. */
  sliceKbps?: number
  timeoutMs?: number
  media: MediaTool
  fetch?: typeof fetch
}

/** The documented verbose_json shape (plus the `speaker` some providers add to segments). */
interface VerboseJson {
  language?: string
  duration?: number
  text?: string
  segments?: { start?: number; end?: number; text?: string; avg_logprob?: number; speaker?: string | number | null; words?: { word?: string; start?: number; end?: number }[] }[]
  words?: { word?: string; start?: number; end?: number }[]
  model?: string
  error?: { message?: string }
}

const sec = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n * 1000) : null)

export function openAiTranscriptionEngine(options: OpenAiTranscriptionOptions): SpeechEngine {
  const base = options.baseUrl.replace(/\/+$/, '')
  const doFetch = options.fetch ?? fetch
  const kbps = options.sliceKbps ?? 64

  async function send(file: Buffer, filename: string, mime: string, language: string | null, signal?: AbortSignal): Promise<VerboseJson> {
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(file)], { type: mime }), filename)
    form.append('model', options.model)
    form.append('response_format', 'verbose_json')
    form.append('timestamp_granularities[]', 'segment')
    form.append('timestamp_granularities[]', 'word')
    if (language) form.append('language', language)
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 600_000)
    let res: Response
    try {
      res = await doFetch(`${base}/audio/transcriptions`, {
        method: 'POST',
        headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
        body: form,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      })
    } catch (err) {
      throw new PipelineFailure('asr_failed', `The transcription endpoint did not answer: ${(err as Error).message}`, true)
    }
    const raw = await res.text()
    let body: VerboseJson
    try {
      body = JSON.parse(raw) as VerboseJson
    } catch {
      throw new PipelineFailure('asr_failed', `The transcription endpoint answered ${res.status} with something that is not JSON.`, res.status >= 500 || res.status === 429)
    }
    if (!res.ok) throw new PipelineFailure('asr_failed', `The transcription endpoint answered ${res.status}: ${body.error?.message ?? raw.slice(0, 200)}`, res.status >= 500 || res.status === 429 || res.status === 408)
    if (!Array.isArray(body.segments)) throw new PipelineFailure('asr_failed', 'The transcription endpoint answered without segments (verbose_json expected).', false)
    return body
  }

  /** Segments of one response, shifted by `offsetMs`, each with the words inside it. */
  function segmentsOf(body: VerboseJson, offsetMs: number): RecognizedSegment[] {
    const topWords: RecognizedWord[] = (body.words ?? [])
      .map((w) => ({ text: String(w.word ?? '').trim(), startMs: sec(w.start), endMs: sec(w.end) }))
      .filter((w): w is RecognizedWord => w.text !== '' && w.startMs !== null && w.endMs !== null)
      .map((w) => ({ ...w, startMs: w.startMs + offsetMs, endMs: w.endMs + offsetMs }))
    const segs = body.segments ?? []
    return segs.flatMap((s, i) => {
      const start = sec(s.start)
      const end = sec(s.end)
      if (start === null || end === null) return []
      const startMs = start + offsetMs
      const endMs = end + offsetMs
      const own = s.words
        ?.map((w) => ({ text: String(w.word ?? '').trim(), startMs: (sec(w.start) ?? NaN) + offsetMs, endMs: (sec(w.end) ?? NaN) + offsetMs }))
        .filter((w) => w.text !== '' && Number.isFinite(w.startMs) && Number.isFinite(w.endMs))
      // Top-level words belong to the segment they start in (the last segment takes the rest).
      const last = i === segs.length - 1
      const words = own ?? topWords.filter((w) => w.startMs >= startMs && (w.startMs < endMs || (last && w.startMs >= startMs)))
      const speaker = s.speaker === undefined || s.speaker === null || s.speaker === '' ? null : String(s.speaker)
      return [
        {
          startMs,
          endMs,
          text: String(s.text ?? ''),
          speaker,
          confidence: typeof s.avg_logprob === 'number' ? Math.exp(s.avg_logprob) : null,
          words: own || body.words ? words : null,
        },
      ]
    })
  }

  return {
    engine: 'openai-compatible',
    provider: new URL(base).host,
    model: options.model,
    async transcribe(req: SpeechRequest): Promise<Recognition> {
      const size = (await stat(req.wavPath)).size
      if (size <= options.maxUploadBytes) {
        req.onProgress?.(5)
        const body = await send(await readFile(req.wavPath), 'audio.wav', 'audio/wav', req.language, req.signal)
        req.onProgress?.(100)
        return { language: body.language ?? null, segments: segmentsOf(body, 0), model: body.model ?? options.model }
      }
      // Slices of equal length whose MP3 fits the limit with a margin for the container.
      const bytesPerSecond = (kbps * 1000) / 8
      const sliceSeconds = Math.max(1, Math.floor((options.maxUploadBytes * 0.9) / bytesPerSecond))
      const segments: RecognizedSegment[] = []
      let language: string | null = null
      let model: string | null = null
      const count = Math.ceil(req.durationSeconds / sliceSeconds)
      for (let i = 0; i < count; i++) {
        const startSeconds = i * sliceSeconds
        const seconds = Math.min(sliceSeconds, req.durationSeconds - startSeconds)
        if (seconds <= 0.05) break
        const path = join(req.workDir, `slice-${i}.mp3`)
        await options.media.encodeSlice(req.wavPath, path, { startSeconds, seconds, kbps }, req.signal ? { signal: req.signal } : {})
        const file = await readFile(path)
        if (file.length > options.maxUploadBytes) throw new PipelineFailure('asr_failed', `A ${seconds}s slice is ${file.length} bytes, over ASR_MAX_UPLOAD_BYTES (${options.maxUploadBytes}).`)
        const body = await send(file, `slice-${i}.mp3`, 'audio/mpeg', req.language, req.signal)
        await rm(path, { force: true })
        language ??= body.language ?? null
        model ??= body.model ?? null
        segments.push(...segmentsOf(body, Math.round(startSeconds * 1000)))
        req.onProgress?.(Math.round(((i + 1) / count) * 100))
      }
      return { language, segments, model: model ?? options.model }
    },
  }
}
