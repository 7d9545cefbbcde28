// The speaker-embedding adapter: a GE2E speaker encoder (3-layer LSTM over 40-band mel frames,
// 256-d unit vectors; Wan et al. 2018) run in plain TypeScript from a PyTorch checkpoint file,
// e.g. the `pretrained.pt` that the Resemblyzer package (PyPI) ships. SPEAKER_EMBEDDING_MODEL
// points at the file; nothing is downloaded. The front end follows Resemblyzer: 16 kHz mono,
// volume raised to −30 dBFS, power mel spectrogram (25 ms Hann window, 10 ms hop, Slaney mel
// filters), 1.6 s partial windows at 1.3 per second, mean of the partial embeddings, unit
// length. Resemblyzer's voice-activity trimming is left out: the ranges given are already one
// speaker's diarized speech.
//
// Audio: WAV (PCM 8/16/24/32-bit or float) is read directly; anything else is decoded with
// the project's ffmpeg (the one the pipeline decodes with).
import { readFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { basename } from 'node:path'
import type { SpeakerEmbedder, SpeakerEmbedding, TimeRange } from '../../ports/speakerEmbedder.ts'
import { readTorchCheckpoint, type Tensor } from './torchPickle.ts'

const SR = 16_000
const N_FFT = 400
const HOP = 160
const N_MELS = 40
const PARTIAL_FRAMES = 160
const HIDDEN = 256
const LAYERS = 3

// ---- audio ------------------------------------------------------------------------------------

export interface Pcm {
  sampleRate: number
  samples: Float32Array
}

/** Mono float samples of a WAV file, or null when the bytes are not a WAV file this reads. */
export function readWav(buf: Buffer): Pcm | null {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return null
  let pos = 12
  let fmt: { format: number; channels: number; rate: number; bits: number } | null = null
  while (pos + 8 <= buf.length) {
    const id = buf.toString('ascii', pos, pos + 4)
    let size = buf.readUInt32LE(pos + 4)
    const body = pos + 8
    if (id === 'fmt ') {
      let format = buf.readUInt16LE(body)
      if (format === 0xfffe && size >= 26) format = buf.readUInt16LE(body + 24) // WAVE_FORMAT_EXTENSIBLE
      fmt = { format, channels: buf.readUInt16LE(body + 2), rate: buf.readUInt32LE(body + 4), bits: buf.readUInt16LE(body + 14) }
    } else if (id === 'data' && fmt) {
      // Streams written before their length was known say 0 or 0xffffffff.
      if (size === 0 || size === 0xffffffff || body + size > buf.length) size = buf.length - body
      const bytes = fmt.bits / 8
      const frames = Math.floor(size / (bytes * fmt.channels))
      const out = new Float32Array(frames)
      for (let i = 0; i < frames; i++) {
        let sum = 0
        for (let c = 0; c < fmt.channels; c++) {
          const at = body + (i * fmt.channels + c) * bytes
          let v: number
          if (fmt.format === 3 && fmt.bits === 32) v = buf.readFloatLE(at)
          else if (fmt.format === 3 && fmt.bits === 64) v = buf.readDoubleLE(at)
          else if (fmt.bits === 16) v = buf.readInt16LE(at) / 32768
          else if (fmt.bits === 8) v = (buf[at]! - 128) / 128
          else if (fmt.bits === 24) v = buf.readIntLE(at, 3) / 8388608
          else if (fmt.bits === 32) v = buf.readInt32LE(at) / 2147483648
          else return null
          sum += v
        }
        out[i] = sum / fmt.channels
      }
      return { sampleRate: fmt.rate, samples: out }
    }
    pos = body + size + (size % 2)
  }
  return null
}

function decodeWithFfmpeg(path: string, bin: string): Promise<Pcm> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['-v', 'error', '-i', path, '-ac', '1', '-ar', String(SR), '-f', 's16le', '-'], { stdio: ['ignore', 'pipe', 'pipe'] })
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

/** Band-limited resampling (windowed sinc), so content above the new Nyquist does not fold back. */
export function resample(x: Float32Array, from: number, to: number): Float32Array {
  if (from === to) return x
  const ratio = to / from
  const n = Math.floor(x.length * ratio)
  const out = new Float32Array(n)
  const cutoff = Math.min(1, ratio)
  const half = 16
  for (let i = 0; i < n; i++) {
    const t = i / ratio
    const c = Math.floor(t)
    let acc = 0
    let wsum = 0
    for (let k = c - half + 1; k <= c + half; k++) {
      if (k < 0 || k >= x.length) continue
      const d = t - k
      const arg = Math.PI * d * cutoff
      const sinc = d === 0 ? 1 : Math.sin(arg) / arg
      const w = 0.5 + 0.5 * Math.cos((Math.PI * d) / half)
      const h = sinc * w
      acc += x[k]! * h
      wsum += h
    }
    out[i] = wsum !== 0 ? acc / wsum : 0
  }
  return out
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
const WINDOW = Float32Array.from({ length: N_FFT }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / N_FFT))
const COS = new Float32Array((N_FFT / 2 + 1) * N_FFT)
const SIN = new Float32Array((N_FFT / 2 + 1) * N_FFT)
for (let k = 0; k <= N_FFT / 2; k++) {
  for (let n = 0; n < N_FFT; n++) {
    COS[k * N_FFT + n] = Math.cos((2 * Math.PI * k * n) / N_FFT)
    SIN[k * N_FFT + n] = Math.sin((2 * Math.PI * k * n) / N_FFT)
  }
}

/** Power mel spectrogram, frames × 40, centred frames with reflected edges. */
export function melSpectrogram(wav: Float32Array): Float32Array[] {
  const pad = N_FFT / 2
  const padded = new Float32Array(wav.length + 2 * pad)
  padded.set(wav, pad)
  for (let i = 1; i <= pad; i++) {
    padded[pad - i] = wav[Math.min(i, wav.length - 1)] ?? 0
    padded[pad + wav.length - 1 + i] = wav[Math.max(0, wav.length - 1 - i)] ?? 0
  }
  const frames = 1 + Math.floor(wav.length / HOP)
  const bins = N_FFT / 2 + 1
  const frame = new Float32Array(N_FFT)
  const power = new Float32Array(bins)
  const out: Float32Array[] = []
  for (let f = 0; f < frames; f++) {
    for (let n = 0; n < N_FFT; n++) frame[n] = padded[f * HOP + n]! * WINDOW[n]!
    for (let k = 0; k < bins; k++) {
      let re = 0
      let im = 0
      const row = k * N_FFT
      for (let n = 0; n < N_FFT; n++) {
        re += frame[n]! * COS[row + n]!
        im -= frame[n]! * SIN[row + n]!
      }
      power[k] = re * re + im * im
    }
    const mel = new Float32Array(N_MELS)
    for (let m = 0; m < N_MELS; m++) {
      const w = FILTERS[m]!
      let s = 0
      for (let k = 0; k < bins; k++) s += w[k]! * power[k]!
      mel[m] = s
    }
    out.push(mel)
  }
  return out
}

// ---- network ----------------------------------------------------------------------------------

// Float64 weights: the arithmetic is in doubles anyway, and reading them needs no conversion.
interface Layer {
  wih: Float64Array
  whh: Float64Array
  bias: Float64Array
  inputSize: number
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x))

export class Ge2eEncoder implements SpeakerEmbedder {
  readonly model: string
  private readonly layers: Layer[]
  private readonly linW: Float32Array
  private readonly linB: Float32Array

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
      if (wih.shape[0] !== 4 * HIDDEN || whh.shape[1] !== HIDDEN) throw new Error(`unexpected LSTM layer ${l} shape ${wih.shape.join('x')}`)
      this.layers.push({ wih: Float64Array.from(wih.data), whh: Float64Array.from(whh.data), bias: Float64Array.from(bih, (v, i) => v + bhh[i]!), inputSize: wih.shape[1]! })
    }
    if (this.layers[0]!.inputSize !== N_MELS) throw new Error(`the encoder expects ${this.layers[0]!.inputSize} mel bands, this front end makes ${N_MELS}`)
    this.linW = get('linear.weight').data
    this.linB = get('linear.bias').data
    this.model = `ge2e:${name}`
  }

  /** One partial (160 frames) to a unit vector: last layer's final hidden state → linear → ReLU → L2. */
  embedFrames(frames: readonly Float32Array[]): Float32Array {
    let input: readonly ArrayLike<number>[] = frames
    let h = new Float64Array(HIDDEN)
    for (const layer of this.layers) {
      h = new Float64Array(HIDDEN)
      const c = new Float64Array(HIDDEN)
      const z = new Float64Array(4 * HIDDEN)
      const outputs: Float64Array[] = []
      const I = layer.inputSize
      const { wih, whh, bias } = layer
      for (const x of input) {
        for (let r = 0; r < 4 * HIDDEN; r++) {
          let s = bias[r]!
          const wi = r * I
          for (let j = 0; j < I; j++) s += wih[wi + j]! * x[j]!
          const wh = r * HIDDEN
          for (let j = 0; j < HIDDEN; j++) s += whh[wh + j]! * h[j]!
          z[r] = s
        }
        const next = new Float64Array(HIDDEN)
        for (let j = 0; j < HIDDEN; j++) {
          const i = sigmoid(z[j]!)
          const f = sigmoid(z[HIDDEN + j]!)
          const g = Math.tanh(z[2 * HIDDEN + j]!)
          const o = sigmoid(z[3 * HIDDEN + j]!)
          c[j] = f * c[j]! + i * g
          next[j] = o * Math.tanh(c[j]!)
        }
        h = next
        outputs.push(next)
      }
      input = outputs
    }
    const e = new Float32Array(HIDDEN)
    for (let r = 0; r < HIDDEN; r++) {
      let s = this.linB[r]!
      for (let j = 0; j < HIDDEN; j++) s += this.linW[r * HIDDEN + j]! * h[j]!
      e[r] = Math.max(0, s)
    }
    return normalize(e)
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
    const mel = melSpectrogram(padded)
    const sum = new Float32Array(HIDDEN)
    for (const s of starts) {
      const e = this.embedFrames(mel.slice(s, s + PARTIAL_FRAMES))
      for (let j = 0; j < HIDDEN; j++) sum[j]! += e[j]!
    }
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
