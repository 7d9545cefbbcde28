// Real speech and media made by the tests: espeak-ng speaks, the project's own ffmpeg encodes;
// conversations as WAV with their segments (voice tests), utterances as MP3/M4A/WAV and MP4s with
// a muxed subtitle track (pipeline tests). The speaker-embedding model file comes from
// adapters/ge2e/resemblyzerModel.ts (fetched once from PyPI, cached under .ci/models).
import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { readFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ffmpegPath } from '../../adapters/ffmpeg/mediaTool.ts'
import { fetchSpeakerModel, SPEAKER_MODEL_FILE } from '../../adapters/ge2e/resemblyzerModel.ts'
import { tempDir } from './tmp.ts'
import { wavFromPcm } from './media.ts'
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
    return { wav: wavFromPcm(Buffer.concat(parts), rate), segments }
  } finally {
    tmp.remove()
  }
}

/** The speaker-embedding model file (fetched on first use). */
export function speakerModel(): string {
  return fetchSpeakerModel(join(import.meta.dirname, '..', '..', '.ci', 'models', SPEAKER_MODEL_FILE))
}

const run = promisify(execFile)

export interface Utterance {
  text: string
  /** espeak-ng voice, e.g. `en+m3`, `en+f3`. */
  voice: string
}

/** espeak-ng speech, one utterance after the other with `gapSeconds` of silence between, encoded by ffmpeg. */
export async function speech(dir: string, name: string, utterances: Utterance[], o: { gapSeconds?: number; format?: 'mp3' | 'wav' | 'm4a' } = {}): Promise<string> {
  const gap = o.gapSeconds ?? 1
  const parts: string[] = []
  for (const [i, u] of utterances.entries()) {
    const p = join(dir, `${name}-${i}.wav`)
    await run('espeak-ng', ['-v', u.voice, '-s', '160', '-w', p, u.text])
    parts.push(p)
  }
  const format = o.format ?? 'mp3'
  const out = join(dir, `${name}.${format}`)
  const inputs = parts.flatMap((p) => ['-i', p])
  // Each utterance is padded with silence, then all are concatenated.
  const filter =
    parts.map((_, i) => `[${i}:a]aresample=22050,apad=pad_len=${Math.round((i === parts.length - 1 ? 0.3 : gap) * 22050)}[a${i}]`).join(';') +
    ';' +
    parts.map((_, i) => `[a${i}]`).join('') +
    `concat=n=${parts.length}:v=0:a=1[out]`
  const codec = format === 'mp3' ? ['-c:a', 'libmp3lame', '-b:a', '64k'] : format === 'm4a' ? ['-c:a', 'aac', '-b:a', '64k'] : ['-c:a', 'pcm_s16le']
  await run(ffmpegPath(), ['-hide_banner', '-y', ...inputs, '-filter_complex', filter, '-map', '[out]', '-ac', '1', ...codec, out])
  return out
}

/** An MP4 with a video track, the audio of `audioPath` and `vtt` muxed in as a mov_text subtitle track. */
export async function mp4WithSubtitles(dir: string, name: string, audioPath: string, vtt: string, language = 'eng'): Promise<string> {
  const subs = join(dir, `${name}.vtt`)
  await writeFile(subs, vtt)
  const out = join(dir, `${name}.mp4`)
  await run(ffmpegPath(), [
    '-hide_banner', '-y',
    '-f', 'lavfi', '-i', 'color=c=blue:s=160x120:r=10',
    '-i', audioPath,
    '-i', subs,
    '-map', '0:v', '-map', '1:a', '-map', '2:s',
    '-c:v', 'mpeg4', '-c:a', 'aac', '-c:s', 'mov_text',
    `-metadata:s:s:0`, `language=${language}`,
    '-shortest', out,
  ])
  return out
}

/** Speech intervals of a media file (ms), found with ffmpeg's silencedetect. */
export async function speechIntervals(path: string): Promise<{ startMs: number; endMs: number }[]> {
  const { stderr } = await run(ffmpegPath(), ['-hide_banner', '-nostdin', '-i', path, '-af', 'silencedetect=noise=-35dB:d=0.4', '-f', 'null', '-'], { maxBuffer: 16 * 1024 * 1024 })
  const duration = durationOf(stderr)
  const silences: { start: number; end: number }[] = []
  let open: number | null = null
  for (const line of stderr.split('\n')) {
    const s = /silence_start: (-?[\d.]+)/.exec(line)
    const e = /silence_end: ([\d.]+)/.exec(line)
    if (s) open = Math.max(0, Number(s[1]))
    if (e && open !== null) (silences.push({ start: open, end: Number(e[1]) }), (open = null))
  }
  if (open !== null) silences.push({ start: open, end: duration })
  const speech: { startMs: number; endMs: number }[] = []
  let at = 0
  for (const s of silences) {
    if (s.start - at > 0.15) speech.push({ startMs: Math.round(at * 1000), endMs: Math.round(s.start * 1000) })
    at = s.end
  }
  if (duration - at > 0.15) speech.push({ startMs: Math.round(at * 1000), endMs: Math.round(duration * 1000) })
  return speech
}

function durationOf(ffmpegStderr: string): number {
  const m = /Duration: (\d+):(\d+):([\d.]+)/.exec(ffmpegStderr)
  if (m) return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])
  const t = [...ffmpegStderr.matchAll(/time=(\d+):(\d+):([\d.]+)/g)].pop()
  return t ? Number(t[1]) * 3600 + Number(t[2]) * 60 + Number(t[3]) : 0
}

export const bytesOf = (path: string) => readFile(path)
