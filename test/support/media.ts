// Real media bytes made by the tests, no binaries needed: a PCM WAV file of a tone.
import { wavFromPcm } from '../../domain/audio/pcm.ts'

export { wavFromPcm }

export function wavBytes(seconds: number, { sampleRate = 8000, frequency = 440 } = {}): Buffer {
  const samples = Math.round(seconds * sampleRate)
  const data = Buffer.alloc(samples * 2)
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 8000), i * 2)
  return wavFromPcm(data, sampleRate)
}
