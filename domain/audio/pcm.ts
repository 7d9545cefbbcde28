// PCM audio in memory, no I/O: WAV bytes read into mono float samples and written from 16-bit
// PCM, and resampling. Shared by the speaker encoder, the diarizer and the speech-quality bench,
// which all work on the 16 kHz mono WAV the pipeline decodes.

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
      if (fmt.format === 1 && fmt.bits === 16 && fmt.channels === 1) {
        // The pipeline's own decoding (16-bit mono): one copy, no per-sample parsing.
        const at = buf.byteOffset + body
        // A view when aligned (a file read whole usually is), else a copy: hours of audio are hundreds of MB.
        const pcm = at % 2 === 0 ? new Int16Array(buf.buffer, at, frames) : new Int16Array(buf.buffer.slice(at, at + frames * 2))
        for (let i = 0; i < frames; i++) out[i] = pcm[i]! / 32768
        return { sampleRate: fmt.rate, samples: out }
      }
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

/** A WAV file around mono 16-bit PCM samples. */
export function wavFromPcm(data: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44)
  header.write('RIFF', 0)
  header.writeUInt32LE(36 + data.length, 4)
  header.write('WAVE', 8)
  header.write('fmt ', 12)
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20) // PCM
  header.writeUInt16LE(1, 22) // mono
  header.writeUInt32LE(sampleRate, 24)
  header.writeUInt32LE(sampleRate * 2, 28)
  header.writeUInt16LE(2, 32)
  header.writeUInt16LE(16, 34)
  header.write('data', 36)
  header.writeUInt32LE(data.length, 40)
  return Buffer.concat([header, data])
}

/** Where the samples of a 16-bit mono PCM WAV start, from its first bytes; null for any other layout. */
export function pcm16MonoLayout(head: Buffer): { dataOffset: number; sampleRate: number } | null {
  if (head.length < 12 || head.toString('ascii', 0, 4) !== 'RIFF' || head.toString('ascii', 8, 12) !== 'WAVE') return null
  let pos = 12
  let rate: number | null = null
  while (pos + 8 <= head.length) {
    const id = head.toString('ascii', pos, pos + 4)
    const size = head.readUInt32LE(pos + 4)
    const body = pos + 8
    if (id === 'fmt ') {
      if (body + 16 > head.length) return null
      let format = head.readUInt16LE(body)
      if (format === 0xfffe && size >= 26 && body + 26 <= head.length) format = head.readUInt16LE(body + 24)
      if (format !== 1 || head.readUInt16LE(body + 2) !== 1 || head.readUInt16LE(body + 14) !== 16) return null
      rate = head.readUInt32LE(body + 4)
    } else if (id === 'data') {
      return rate ? { dataOffset: body, sampleRate: rate } : null
    }
    pos = body + size + (size % 2)
  }
  return null
}
