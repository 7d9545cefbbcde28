// The speaker-embedding adapter: a GE2E speaker encoder (3-layer LSTM over 40-band mel frames,
// 256-d unit vectors; Wan et al. 2018) run in TypeScript and a WebAssembly SIMD kernel (kernels.wat) from a PyTorch checkpoint file,
// e.g. the `pretrained.pt` that the Resemblyzer package (PyPI) ships. SPEAKER_EMBEDDING_MODEL
// points at the file; nothing is downloaded. The front end follows Resemblyzer: 16 kHz mono,
// volume raised to −30 dBFS, power mel spectrogram (25 ms Hann window, 10 ms hop, Slaney mel
// filters), 1.6 s partial windows at 1.3 per second, mean of the partial embeddings, unit
// length. Resemblyzer's voice-activity trimming is left out: the ranges given are already one
// speaker's diarized speech.
//
// Audio: WAV (PCM 8/16/24/32-bit or float) is read directly; anything else is decoded with
// the project's ffmpeg (the one the pipeline decodes with), opened as user media is
// (adapters/ffmpeg/binaries.ts: local file, container demuxers only).
import { readFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { basename } from 'node:path'
import type { SpeakerEmbedder, SpeakerEmbedding, TimeRange, WindowEmbedder } from '../../ports/speakerEmbedder.ts'
import { readTorchCheckpoint, type Tensor } from './torchPickle.ts'
import { Kernels, type Resident } from './kernels.ts'
import { readWav, resample, type Pcm } from '../../domain/audio/pcm.ts'
import { userMediaInput } from '../ffmpeg/binaries.ts'

const SR = 16_000
const N_FFT = 400
const HOP = 160
const N_MELS = 40
const PARTIAL_FRAMES = 160
const HIDDEN = 256
const LAYERS = 3

// ---- audio ------------------------------------------------------------------------------------

function decodeWithFfmpeg(path: string, bin: string): Promise<Pcm> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['-v', 'error', ...userMediaInput(path), '-ac', '1', '-ar', String(SR), '-f', 's16le', '-'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let err = ''
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.on('error', () => reject(new Error('the audio is not WAV and ffmpeg is not available to decode it')))
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`ffmpeg could not decode the audio: ${err.slice(0, 200)}`))
      const b = Buffer.concat(out)
      const s = new Float32Array(b.length >> 1)
      for (let i = 0; i < s.length; i++) s[i] = b.readInt16LE(i * 2) / 32768
      resolve({ sampleRate: SR, samples: s })
    })
  })
}

// ---- mel spectrogram --------------------------------------------------------------------------

const F_SP = 200 / 3
const MIN_LOG_HZ = 1000
const MIN_LOG_MEL = MIN_LOG_HZ / F_SP
const LOGSTEP = Math.log(6.4) / 27
const hzToMel = (hz: number) => (hz >= MIN_LOG_HZ ? MIN_LOG_MEL + Math.log(hz / MIN_LOG_HZ) / LOGSTEP : hz / F_SP)
const melToHz = (mel: number) => (mel >= MIN_LOG_MEL ? MIN_LOG_HZ * Math.exp(LOGSTEP * (mel - MIN_LOG_MEL)) : F_SP * mel)

/** Slaney-style mel filters with Slaney area normalisation (librosa's defaults). */
function melFilters(): Float32Array[] {
  const bins = N_FFT / 2 + 1
  const fft = Array.from({ length: bins }, (_, i) => (i * SR) / N_FFT)
  const top = hzToMel(SR / 2)
  const melF = Array.from({ length: N_MELS + 2 }, (_, i) => melToHz((top * i) / (N_MELS + 1)))
  const filters: Float32Array[] = []
  for (let m = 0; m < N_MELS; m++) {
    const w = new Float32Array(bins)
    const enorm = 2 / (melF[m + 2]! - melF[m]!)
    for (let k = 0; k < bins; k++) {
      const lower = (fft[k]! - melF[m]!) / (melF[m + 1]! - melF[m]!)
      const upper = (melF[m + 2]! - fft[k]!) / (melF[m + 2]! - melF[m + 1]!)
      w[k] = Math.max(0, Math.min(lower, upper)) * enorm
    }
    filters.push(w)
  }
  return filters
}

const FILTERS = melFilters()
const BINS = N_FFT / 2 + 1
/** Each filter's non-zero span, so a frame's 40 bands cost a few hundred multiplications. */
const SPANS = FILTERS.map((w) => {
  let a = 0
  while (a < BINS && w[a] === 0) a++
  let b = BINS
  while (b > a && w[b - 1] === 0) b--
  return [a, b] as const
})
const WINDOW = Float32Array.from({ length: N_FFT }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / N_FFT))
/** The real DFT as a matrix: rows 0..200 the cosines, 201..401 the sines (N_FFT = 400 has no radix-2 FFT). */
const DFT = new Float32Array(2 * BINS * N_FFT)
for (let k = 0; k < BINS; k++) {
  for (let n = 0; n < N_FFT; n++) {
    DFT[k * N_FFT + n] = Math.cos((2 * Math.PI * k * n) / N_FFT)
    DFT[(BINS + k) * N_FFT + n] = Math.sin((2 * Math.PI * k * n) / N_FFT)
  }
}

// ---- network ----------------------------------------------------------------------------------

interface Layer {
  /** 4·256 × inputSize (gates i, f, g, o). */
  wih: Resident
  whh: Resident
  /** bias_ih + bias_hh, one row */
  bias: Resident
  inputSize: number
}

const GATES = 4 * HIDDEN
/** Partials that go through the LSTM together (bounds the scratch memory: ~30 MB). */
const BATCH = 48
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x))

export class Ge2eEncoder implements SpeakerEmbedder, WindowEmbedder {
  readonly model: string
  private readonly k = new Kernels()
  private readonly layers: Layer[]
  private readonly linear: { w: Resident; b: Resident }
  private readonly dft: Resident

  constructor(
    tensors: Map<string, Tensor>,
    name: string,
    /** The ffmpeg that decodes audio other than WAV. */
    private readonly ffmpeg: string,
  ) {
    const get = (k: string) => {
      const t = tensors.get(`model_state.${k}`) ?? tensors.get(k)
      if (!t) throw new Error(`the checkpoint has no ${k}: not a GE2E speaker encoder`)
      return t
    }
    this.layers = []
    for (let l = 0; l < LAYERS; l++) {
      const wih = get(`lstm.weight_ih_l${l}`)
      const whh = get(`lstm.weight_hh_l${l}`)
      const bih = get(`lstm.bias_ih_l${l}`).data
      const bhh = get(`lstm.bias_hh_l${l}`).data
      if (wih.shape[0] !== GATES || whh.shape[1] !== HIDDEN || wih.shape[1]! % 4 !== 0) throw new Error(`unexpected LSTM layer ${l} shape ${wih.shape.join('x')}`)
      const inputSize = wih.shape[1]!
      this.layers.push({
        wih: this.k.keep(wih.data, GATES, inputSize),
        whh: this.k.keep(whh.data, GATES, HIDDEN),
        bias: this.k.keep(Float32Array.from(bih, (v, i) => v + bhh[i]!), 1, GATES),
        inputSize,
      })
    }
    if (this.layers[0]!.inputSize !== N_MELS) throw new Error(`the encoder expects ${this.layers[0]!.inputSize} mel bands, this front end makes ${N_MELS}`)
    this.linear = { w: this.k.keep(get('linear.weight').data, HIDDEN, HIDDEN), b: this.k.keep(get('linear.bias').data, 1, HIDDEN) }
    this.dft = this.k.keep(DFT, 2 * BINS, N_FFT)
    this.model = `ge2e:${name}`
  }

  /** Power mel spectrogram, frames × 40 (flattened), centred frames with reflected edges (librosa's). */
  melSpectrogram(wav: Float32Array): Float32Array {
    const pad = N_FFT / 2
    const padded = new Float32Array(wav.length + 2 * pad)
    padded.set(wav, pad)
    for (let i = 1; i <= pad; i++) {
      padded[pad - i] = wav[Math.min(i, wav.length - 1)] ?? 0
      padded[pad + wav.length - 1 + i] = wav[Math.max(0, wav.length - 1 - i)] ?? 0
    }
    const frames = 1 + Math.floor(wav.length / HOP)
    const k = this.k
    k.begin(frames * (N_FFT + 2 * BINS) + 2 * BINS)
    const x = k.alloc(frames * N_FFT)
    const zero = k.alloc(2 * BINS)
    const spec = k.alloc(frames * 2 * BINS)
    const xv = k.view(x, frames * N_FFT)
    for (let f = 0; f < frames; f++) {
      const at = f * HOP
      const o = f * N_FFT
      for (let n = 0; n < N_FFT; n++) xv[o + n] = padded[at + n]! * WINDOW[n]!
    }
    k.gemm(this.dft, x, frames, zero, 0, spec)
    const sv = k.view(spec, frames * 2 * BINS)
    const out = new Float32Array(frames * N_MELS)
    const power = new Float32Array(BINS)
    for (let f = 0; f < frames; f++) {
      const o = f * 2 * BINS
      for (let b = 0; b < BINS; b++) {
        const re = sv[o + b]!
        const im = sv[o + BINS + b]!
        power[b] = re * re + im * im
      }
      for (let m = 0; m < N_MELS; m++) {
        const w = FILTERS[m]!
        const [a, b] = SPANS[m]!
        let s = 0
        for (let i = a; i < b; i++) s += w[i]! * power[i]!
        out[f * N_MELS + m] = s
      }
    }
    return out
  }

  /**
   * Partials to unit vectors: each partial is `frames` mel rows (frames × 40, flattened); the
   * last layer's final hidden state → linear → ReLU → L2. Partials run through the LSTM in
   * batches, so every weight row read serves the whole batch (the recurrence is the cost: about
   * 1.3 M multiply-adds per frame).
   */
  embedPartials(partials: readonly Float32Array[], frames: number): Float32Array[] {
    const result: Float32Array[] = []
    for (let i = 0; i < partials.length; i += BATCH) result.push(...this.embedBatch(partials.slice(i, i + BATCH), frames))
    return result
  }

  private embedBatch(partials: readonly Float32Array[], T: number): Float32Array[] {
    const B = partials.length
    if (B === 0) return []
    const k = this.k
    k.begin(T * B * (N_MELS + GATES + 2 * HIDDEN) + B * (GATES + 3 * HIDDEN))
    // Layout [t][b][feature], so one step's rows of the whole batch are contiguous.
    const mel = k.alloc(T * B * N_MELS)
    const zx = k.alloc(T * B * GATES)
    const seqA = k.alloc(T * B * HIDDEN)
    const seqB = k.alloc(T * B * HIDDEN)
    const h = k.alloc(B * HIDDEN)
    const z = k.alloc(B * GATES)
    const emb = k.alloc(B * HIDDEN)
    const melV = k.view(mel, T * B * N_MELS)
    for (let b = 0; b < B; b++) {
      const p = partials[b]!
      if (p.length !== T * N_MELS) throw new Error('every partial of a batch has the same number of frames')
      for (let t = 0; t < T; t++) melV.set(p.subarray(t * N_MELS, (t + 1) * N_MELS), (t * B + b) * N_MELS)
    }
    const zv = k.view(z, B * GATES)
    const hv = k.view(h, B * HIDDEN)
    const c = new Float32Array(B * HIDDEN)
    let input = mel
    for (const [index, layer] of this.layers.entries()) {
      const out = index % 2 === 0 ? seqA : seqB
      const outV = k.view(out, T * B * HIDDEN)
      // The input projections of every step at once, then the recurrence step by step.
      k.gemm(layer.wih, input, T * B, layer.bias.ptr, 0, zx)
      hv.fill(0)
      c.fill(0)
      for (let t = 0; t < T; t++) {
        k.gemm(layer.whh, h, B, zx + t * B * GATES * 4, GATES, z)
        for (let b = 0; b < B; b++) {
          const gb = b * GATES
          const hb = b * HIDDEN
          for (let j = 0; j < HIDDEN; j++) {
            const i = sigmoid(zv[gb + j]!)
            const f = sigmoid(zv[gb + HIDDEN + j]!)
            const g = Math.tanh(zv[gb + 2 * HIDDEN + j]!)
            const o = sigmoid(zv[gb + 3 * HIDDEN + j]!)
            const cj = f * c[hb + j]! + i * g
            c[hb + j] = cj
            hv[hb + j] = o * Math.tanh(cj)
          }
        }
        outV.set(hv, t * B * HIDDEN)
      }
      input = out
    }
    k.gemm(this.linear.w, h, B, this.linear.b.ptr, 0, emb)
    const ev = k.view(emb, B * HIDDEN)
    const result: Float32Array[] = []
    for (let b = 0; b < B; b++) result.push(normalize(Float32Array.from(ev.subarray(b * HIDDEN, (b + 1) * HIDDEN), (v) => Math.max(0, v))))
    return result
  }

  /**
   * One vector per window of 16 kHz audio (each raised to −30 dBFS as the encoder was trained):
   * the diarizer's entry point. Windows of equal length share a batch.
   */
  embedWindows(windows: readonly Float32Array[]): Float32Array[] {
    const out: Float32Array[] = new Array(windows.length)
    const byFrames = new Map<number, number[]>()
    const mels = windows.map((w, i) => {
      const mel = this.melSpectrogram(normalizeVolume(w, -30))
      const frames = mel.length / N_MELS
      const group = byFrames.get(frames) ?? []
      group.push(i)
      byFrames.set(frames, group)
      return mel
    })
    for (const [frames, idx] of byFrames) {
      const vecs = this.embedPartials(idx.map((i) => mels[i]!), frames)
      idx.forEach((i, k) => (out[i] = vecs[k]!))
    }
    return out
  }

  /** A whole utterance at 16 kHz: partial windows at 1.3 per second, averaged (Resemblyzer's recipe). */
  embedWav(wav: Float32Array): Float32Array {
    const framesTotal = Math.ceil((wav.length + 1) / HOP)
    const step = Math.round(SR / 1.3 / HOP)
    const starts: number[] = []
    for (let i = 0; i < Math.max(1, framesTotal - PARTIAL_FRAMES + step + 1); i += step) starts.push(i)
    const lastStart = starts[starts.length - 1]! * HOP
    if (starts.length > 1 && (wav.length - lastStart) / (PARTIAL_FRAMES * HOP) < 0.75) starts.pop()
    const needed = (starts[starts.length - 1]! + PARTIAL_FRAMES) * HOP
    const padded = needed > wav.length ? Float32Array.from({ length: needed }, (_, i) => wav[i] ?? 0) : wav
    const mel = this.melSpectrogram(padded)
    const partials = starts.map((s) => mel.slice(s * N_MELS, (s + PARTIAL_FRAMES) * N_MELS))
    const sum = new Float32Array(HIDDEN)
    for (const e of this.embedPartials(partials, PARTIAL_FRAMES)) for (let j = 0; j < HIDDEN; j++) sum[j]! += e[j]!
    return normalize(sum)
  }

  async embed(audioPath: string, ranges: readonly TimeRange[]): Promise<SpeakerEmbedding | null> {
    const file = readFileSync(audioPath)
    const pcm = readWav(file) ?? (await decodeWithFfmpeg(audioPath, this.ffmpeg))
    const parts: Float32Array[] = []
    for (const r of ranges) {
      const a = Math.max(0, Math.floor((r.startMs / 1000) * pcm.sampleRate))
      const b = Math.min(pcm.samples.length, Math.ceil((r.endMs / 1000) * pcm.sampleRate))
      if (b > a) parts.push(pcm.samples.subarray(a, b))
    }
    const total = parts.reduce((n, p) => n + p.length, 0)
    const voiceSeconds = total / pcm.sampleRate
    // Under half a second there is not enough voice to say anything.
    if (voiceSeconds < 0.5) return null
    const joined = new Float32Array(total)
    let at = 0
    for (const p of parts) joined.set(p, (at += p.length) - p.length)
    const wav = normalizeVolume(resample(joined, pcm.sampleRate, SR), -30)
    return { vector: this.embedWav(wav), voiceSeconds: Math.round(voiceSeconds * 1000) / 1000 }
  }
}

function normalize(v: Float32Array): Float32Array {
  let n = 0
  for (const x of v) n += x * x
  n = Math.sqrt(n)
  if (n === 0) return v
  return v.map((x) => x / n)
}

/** Raises quiet audio to the target loudness (never lowers it), as the encoder was trained. */
function normalizeVolume(wav: Float32Array, targetDbfs: number): Float32Array {
  let ms = 0
  for (const x of wav) ms += x * x
  ms /= Math.max(1, wav.length)
  if (ms === 0) return wav
  const change = targetDbfs - 10 * Math.log10(ms)
  if (change < 0) return wav
  const gain = 10 ** (change / 20)
  return wav.map((x) => x * gain)
}

/** Loads the encoder from a PyTorch checkpoint file (synchronously: it is read once at start). */
export function loadGe2eEncoder(path: string, ffmpeg: string): Ge2eEncoder {
  return new Ge2eEncoder(readTorchCheckpoint(readFileSync(path)), basename(path), ffmpeg)
}
