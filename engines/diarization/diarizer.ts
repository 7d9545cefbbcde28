// The local diarizer: speech activity → fixed windows over the speech the engine recognized →
// one speaker embedding per window (the GE2E encoder, behind WindowEmbedder) → clustering with
// the number of speakers found (or the user's hint) → speakers onto words and segments.
// It runs on the WAV the pipeline already decoded, in small batches that yield to the event
// loop (the job's lease heartbeats, the API in the same process) and stop on abort.
import type { Diarization, DiarizationRequest, Diarizer } from '../../ports/diarizer.ts'
import type { TimeRange, WindowEmbedder } from '../../ports/speakerEmbedder.ts'
import { readWavFile } from './wavFile.ts'
import { speechRanges } from './activity.ts'
import { clusterVectors } from './cluster.ts'
import { labelSegments, type LabelledSpan } from './assign.ts'

const SR = 16_000
/** Tuned on the tuning part of bench/speech-quality.ts (never on its held-out part). */
export const DEFAULT_DIARIZATION_THRESHOLD = 0.75

export interface LocalDiarizerOptions {
  /** Window length (default 1600 ms: the encoder's training length). */
  windowMs?: number
  /** Hop between windows of one stretch of speech (default: the window, no overlap). */
  stepMs?: number
  /** Speech shorter than this gets no window of its own; its words take their neighbours' speaker (default 400 ms). */
  minSpeechMs?: number
  /** Cosine similarity at which two clusters are one voice (default 0.8; tuned on the bench's tuning part). */
  threshold?: number
  /** Without a hint, a voice with less speech than this is not a speaker of its own (default 1 s). */
  minSpeakerSeconds?: number
  /** Windows embedded per batch between two yields to the event loop (default 8). */
  batch?: number
}

export interface Window {
  /** Where the speech of the window is (a short stretch is padded with silence to the window's length). */
  startMs: number
  endMs: number
}

/** Fixed-length windows over the speech ranges, evenly spread over each range. */
export function windowsOver(ranges: readonly TimeRange[], windowMs: number, stepMs: number, minSpeechMs: number): Window[] {
  const out: Window[] = []
  for (const r of ranges) {
    const len = r.endMs - r.startMs
    if (len < minSpeechMs) continue
    if (len <= windowMs) {
      out.push({ startMs: r.startMs, endMs: r.endMs })
      continue
    }
    const count = Math.ceil((len - windowMs) / stepMs) + 1
    const hop = (len - windowMs) / (count - 1)
    for (let i = 0; i < count; i++) {
      const startMs = r.startMs + Math.round(i * hop)
      out.push({ startMs, endMs: startMs + windowMs })
    }
  }
  return out
}

/** Where speech and recognized text meet: the speech ranges cut to the segments (widened a little). */
export function recognizedSpeech(ranges: readonly TimeRange[], segments: DiarizationRequest['segments']): TimeRange[] {
  const spans = segments.map((s) => ({ startMs: s.startMs - 200, endMs: s.endMs + 200 })).sort((a, b) => a.startMs - b.startMs)
  const out: TimeRange[] = []
  for (const r of ranges) {
    for (const s of spans) {
      const a = Math.max(r.startMs, s.startMs)
      const b = Math.min(r.endMs, s.endMs)
      if (b <= a) continue
      const last = out[out.length - 1]
      if (last && a <= last.endMs) last.endMs = Math.max(last.endMs, b)
      else out.push({ startMs: a, endMs: b })
    }
  }
  return out
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

export class LocalDiarizer implements Diarizer {
  readonly model: string
  private readonly settings: Required<LocalDiarizerOptions>

  constructor(
    private readonly embedder: WindowEmbedder,
    options: LocalDiarizerOptions = {},
  ) {
    this.model = embedder.model
    this.settings = { windowMs: 1600, stepMs: options.windowMs ?? 1600, minSpeechMs: 400, threshold: DEFAULT_DIARIZATION_THRESHOLD, minSpeakerSeconds: 1, batch: 8, ...options }
  }

  async diarize(req: DiarizationRequest): Promise<Diarization> {
    const segments = [...req.segments]
    if (segments.length === 0) return { segments, speakerCount: 0 }
    const samples = await readWavFile(req.wavPath, SR)
    const speech = recognizedSpeech(speechRanges(samples, SR), segments)
    const windows = windowsOver(speech, this.settings.windowMs, this.settings.stepMs, this.settings.minSpeechMs)
    const length = Math.round((this.settings.windowMs / 1000) * SR)
    const vectors: Float32Array[] = []
    for (let i = 0; i < windows.length; i += this.settings.batch) {
      if (req.signal?.aborted) throw req.signal.reason instanceof Error ? req.signal.reason : new Error('diarization stopped')
      const audio = windows.slice(i, i + this.settings.batch).map((w) => {
        const a = Math.round((w.startMs / 1000) * SR)
        const part = samples.subarray(a, Math.min(samples.length, a + Math.min(length, Math.round(((w.endMs - w.startMs) / 1000) * SR))))
        // Shorter speech is padded with silence in front: the encoder reads the last state.
        const padded = new Float32Array(length)
        padded.set(part, length - part.length)
        return padded
      })
      vectors.push(...this.embedder.embedWindows(audio))
      await yieldToLoop()
    }
    if (vectors.length === 0) {
      // Too little speech to tell voices apart: one speaker said it all.
      const one = segments.map((s) => ({ ...s, speaker: '1' }))
      return { segments: one, speakerCount: 1 }
    }
    const labels = clusterVectors(vectors, {
      k: req.speakers,
      threshold: this.settings.threshold,
      weights: windows.map((w) => (w.endMs - w.startMs) / 1000),
      minSeconds: this.settings.minSpeakerSeconds,
    })
    const spans: LabelledSpan[] = windows.map((w, i) => ({ ...w, label: labels[i]! }))
    const labelled = labelSegments(segments, spans)
    return { segments: labelled, speakerCount: new Set(labelled.map((s) => s.speaker).filter((s) => s !== null)).size }
  }
}
