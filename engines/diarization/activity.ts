// Speech activity from loudness: 20 ms frames every 10 ms, a frame is active when it stands out
// of the recording's own noise floor (its quietest tenth) and of an absolute floor, short gaps
// are bridged and clicks dropped. It cannot tell speech from music or steady noise: it is what
// the pipeline's no-speech check falls back on while the trained VAD cannot run (no Python, the
// models not fetched yet), so audio with nothing to hear still fails before recognition.
import type { TimeRange } from '../../ports/speakerEmbedder.ts'
import type { SpeechActivity } from '../../ports/diarizer.ts'
import { readWavFile } from './wavFile.ts'

export interface ActivityOptions {
  /** Nothing quieter than this counts, in dBFS (default −60). */
  absoluteFloorDb?: number
  /** How far above the noise floor a frame must be, in dB (default 10). */
  aboveNoiseDb?: number
  /** Pauses shorter than this are bridged (default 250 ms). */
  bridgeMs?: number
  /** Active stretches shorter than this are dropped (default 120 ms). */
  minMs?: number
  /** Added around each range (default 50 ms). */
  padMs?: number
}

const FRAME_MS = 20
const HOP_MS = 10

/** Frame energies in dBFS, one per 10 ms. */
export function frameEnergies(samples: Float32Array, sampleRate: number): Float32Array {
  const frame = Math.round((sampleRate * FRAME_MS) / 1000)
  const hop = Math.round((sampleRate * HOP_MS) / 1000)
  const n = samples.length < frame ? (samples.length > 0 ? 1 : 0) : 1 + Math.floor((samples.length - frame) / hop)
  const out = new Float32Array(n)
  for (let f = 0; f < n; f++) {
    const a = f * hop
    const b = Math.min(samples.length, a + frame)
    let s = 0
    for (let i = a; i < b; i++) s += samples[i]! * samples[i]!
    out[f] = 10 * Math.log10(s / Math.max(1, b - a) + 1e-12)
  }
  return out
}

function percentile(sorted: Float32Array, p: number): number {
  if (sorted.length === 0) return -120
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
}

/** Speech ranges (ms) of mono samples. */
export function speechRanges(samples: Float32Array, sampleRate: number, options: ActivityOptions = {}): TimeRange[] {
  const energies = frameEnergies(samples, sampleRate)
  if (energies.length === 0) return []
  const sorted = Float32Array.from(energies).sort()
  const floor = percentile(sorted, 0.1)
  const peak = percentile(sorted, 0.95)
  // Steady sound (floor close to peak) leaves the threshold under the peak, so it stays active
  // and recognition decides; true silence stays under the absolute floor.
  const threshold = Math.max(options.absoluteFloorDb ?? -60, Math.min(floor + (options.aboveNoiseDb ?? 10), peak - 10))
  const bridge = Math.round((options.bridgeMs ?? 250) / HOP_MS)
  const min = Math.round((options.minMs ?? 120) / HOP_MS)
  const pad = options.padMs ?? 50
  const runs: [number, number][] = []
  let start = -1
  for (let f = 0; f <= energies.length; f++) {
    const on = f < energies.length && energies[f]! > threshold
    if (on && start < 0) start = f
    if (!on && start >= 0) {
      const last = runs[runs.length - 1]
      if (last && start - last[1] <= bridge) last[1] = f
      else runs.push([start, f])
      start = -1
    }
  }
  const durationMs = (samples.length / sampleRate) * 1000
  const ranges: TimeRange[] = []
  for (const [a, b] of runs) {
    if (b - a < min) continue
    const r = { startMs: Math.max(0, a * HOP_MS - pad), endMs: Math.min(durationMs, b * HOP_MS + FRAME_MS + pad) }
    const last = ranges[ranges.length - 1]
    if (last && r.startMs <= last.endMs) last.endMs = Math.max(last.endMs, r.endMs)
    else ranges.push(r)
  }
  return ranges
}


/** The speech-activity port over a WAV file. */
export class LoudnessSpeechActivity implements SpeechActivity {
  constructor(private readonly options: ActivityOptions = {}) {}

  async detect(wavPath: string): Promise<TimeRange[]> {
    return speechRanges(await readWavFile(wavPath, 16_000), 16_000, this.options)
  }
}

/**
 * The trained VAD when it runs, else loudness: a failure of the first (its runtime missing, its
 * process gone) is said once per reason and answered by the second.
 */
export function preferredActivity(primary: SpeechActivity, fallback: SpeechActivity, log: (line: string) => void): SpeechActivity {
  let said = ''
  return {
    async detect(wavPath) {
      try {
        return await primary.detect(wavPath)
      } catch (err) {
        const why = (err as Error).message
        if (why !== said) log(`speech activity: the trained VAD failed (${why}); loudness is used instead`)
        said = why
        return fallback.detect(wavPath)
      }
    },
  }
}
