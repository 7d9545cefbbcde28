// The local diarizer: the converted networks against the original PyTorch modules' outputs, the
// trained speech activity, a short two-voice dialogue (count, turn boundary, a speaker change
// inside a recognized segment cut at the word, the hint), word starts taken from the speech
// activity, speakers onto words, the loudness fallback, and the removal of non-speech tags.
// The models come from .ci/models (npm test runs `npm run diarizer-setup` for it first).
import t from 'tap'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { onnxDiarizer } from '../adapters/onnxruntime/diarizer.ts'
import { TurnDiarizer, fitToTurns } from '../engines/diarization/diarizer.ts'
import { labelSegments } from '../engines/diarization/assign.ts'
import { preferredActivity } from '../engines/diarization/activity.ts'
import { startsFromSpeech } from '../domain/notes/speechTiming.ts'
import { readWav, wavFromPcm } from '../domain/audio/pcm.ts'
import { stripNonSpeech, withoutNonSpeech } from '../domain/notes/nonSpeech.ts'
import { voiceLike } from './support/voiceLike.ts'
import { tempDir } from './support/tmp.ts'
import type { RecognizedSegment, RecognizedWord } from '../ports/speechEngine.ts'

const SR = 16_000
const tmp = tempDir('diar-')
t.teardown(tmp.remove)
const models = onnxDiarizer({ modelsDir: resolve('.ci', 'models'), python: process.env.ASR_PYTHON || 'python3', threads: 2, fetch: false })
t.teardown(models.close)

function wavFile(name: string, samples: Float32Array): string {
  const data = Buffer.alloc(samples.length * 2)
  for (let i = 0; i < samples.length; i++) data.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), i * 2)
  const path = join(tmp.dir, name)
  writeFileSync(path, wavFromPcm(data, SR))
  return path
}

t.test('the converted networks give what the original PyTorch modules gave on the same samples', async (t) => {
  const fixture = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'diarizer-reference.json'), 'utf8')) as {
    wavSha256: string
    segmentationEvery: number
    segmentation: number[][]
    fbankEvery: number
    fbank: number[][]
    embedding: number[]
  }
  const wav = wavFile('reference.wav', voiceLike())
  t.equal(createHash('sha256').update(readFileSync(wav)).digest('hex'), fixture.wavSha256, 'the same input samples as the reference run')
  const p = await models.probe(wav)
  const worst = (a: number[][], b: number[][]) => Math.max(...a.flatMap((row, i) => row.map((x, j) => Math.abs(x - b[i]![j]!))))
  const seg = p.segmentation.filter((_, i) => i % fixture.segmentationEvery === 0)
  t.equal(seg.length, fixture.segmentation.length)
  t.ok(worst(seg, fixture.segmentation) < 0.01, `segmentation-3.0 log-probabilities within 0.01 (worst ${worst(seg, fixture.segmentation).toExponential(2)})`)
  const argmax = (row: number[]) => row.indexOf(Math.max(...row))
  t.same(seg.map(argmax), fixture.segmentation.map(argmax), 'the same powerset class in every frame')
  const fb = p.fbank.filter((_, i) => i % fixture.fbankEvery === 0)
  t.ok(worst(fb, fixture.fbank) < 0.01, `Kaldi fbank within 0.01 (worst ${worst(fb, fixture.fbank).toExponential(2)})`)
  const dot = p.embedding.reduce((s, x, i) => s + x * fixture.embedding[i]!, 0)
  const cos = dot / Math.hypot(...p.embedding) / Math.hypot(...fixture.embedding)
  t.ok(cos > 0.99999, `CAM++ embedding: cosine ${cos} with the reference`)
  t.ok(Math.max(...p.embedding.map((x, i) => Math.abs(x - fixture.embedding[i]!))) < 1e-3, 'and every dimension within 0.001')
})

/** espeak-ng turns one after the other (`gap` seconds apart, `lead` seconds of silence first), with their true times. */
function dialogue(turns: [voice: string, text: string][], lead = 0.6, gap = 0.5) {
  const parts = turns.map(([voice, text], i) => {
    const p = join(tmp.dir, `turn-${i}.wav`)
    execFileSync('espeak-ng', ['-v', voice, '-s', '165', '-w', p, text])
    const out = join(tmp.dir, `turn-${i}-16k.wav`)
    execFileSync('sox', ['-D', p, '-r', String(SR), '-c', '1', '-b', '16', out])
    return readWav(readFileSync(out))!.samples
  })
  const total = lead * SR + parts.reduce((n, p) => n + p.length + gap * SR, 0)
  const mix = new Float32Array(Math.round(total))
  let at = Math.round(lead * SR)
  const truth = parts.map((p, i) => {
    mix.set(p, at)
    const turn = { startMs: (at / SR) * 1000, endMs: ((at + p.length) / SR) * 1000, words: turns[i]![1].split(' ') }
    at += p.length + Math.round(gap * SR)
    return turn
  })
  return { samples: mix, truth }
}

/** Words spread evenly over their turn: what a recognizer gives, roughly. */
const wordsOf = (turn: { startMs: number; endMs: number; words: string[] }): RecognizedWord[] =>
  turn.words.map((text, i) => {
    const step = (turn.endMs - turn.startMs) / turn.words.length
    return { text, startMs: Math.round(turn.startMs + i * step), endMs: Math.round(turn.startMs + (i + 1) * step - 20) }
  })

t.test('speech activity: none in silence or a steady tone, the turns in speech', async (t) => {
  t.same(await models.detect(wavFile('silence.wav', new Float32Array(3 * SR))), [], 'digital silence')
  const tone = Float32Array.from({ length: 4 * SR }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 440 * i) / SR))
  t.same(await models.detect(wavFile('tone.wav', tone)), [], 'a steady tone is not speech')
  const { samples, truth } = dialogue([
    ['en+m3', 'Good morning everyone.'],
    ['en+f3', 'Thanks, nice to see you.'],
  ])
  const speech = await models.detect(wavFile('two-turns.wav', samples))
  t.ok(speech.length >= 1, JSON.stringify(speech))
  t.ok(Math.abs(speech[0]!.startMs - truth[0]!.startMs) < 200, `speech starts at ${speech[0]!.startMs} ms, truth ${Math.round(truth[0]!.startMs)}`)
  t.ok(Math.abs(speech.at(-1)!.endMs - truth[1]!.endMs) < 300, `and ends at ${speech.at(-1)!.endMs} ms, truth ${Math.round(truth[1]!.endMs)}`)
})

t.test('a two-voice dialogue: two speakers, the turns where they are, a change inside a segment cut at the word, the hint', async (t) => {
  const { samples, truth } = dialogue([
    ['en+m3', 'Good morning, thanks for joining the weekly planning meeting today.'],
    ['en+f3', 'Thanks! I have one question about the budget for the new office.'],
    ['en+m3', 'Sure, the budget review is finished and the numbers look good.'],
  ])
  const wav = wavFile('dialogue.wav', samples)
  // What a recognizer might cut: the first two turns in one segment, the third alone.
  const first = [...wordsOf(truth[0]!), ...wordsOf(truth[1]!)]
  const segments: RecognizedSegment[] = [
    { startMs: 0, endMs: first.at(-1)!.endMs, text: first.map((w) => w.text).join(' '), speaker: null, confidence: 0.9, words: first },
    { startMs: wordsOf(truth[2]!)[0]!.startMs, endMs: truth[2]!.endMs, text: truth[2]!.words.join(' '), speaker: null, confidence: 0.9, words: wordsOf(truth[2]!) },
  ]
  const diarizer = new TurnDiarizer(models)
  const d = await diarizer.diarize({ wavPath: wav, segments, speakers: null })
  const shown = JSON.stringify(d.segments.map((s) => [s.speaker, s.startMs, s.endMs, s.text]))
  t.equal(d.speakerCount, 2, `two speakers: ${shown}`)
  t.equal(d.segments.length, 3, 'the first segment is cut in two')
  t.match(d.segments[1], { speaker: '2', text: /^Thanks! I have one question/ }, 'at the first word of the second voice')
  t.equal(d.segments[0]!.speaker, '1')
  t.equal(d.segments[2]!.speaker, '1', 'the first voice again')
  t.ok(Math.abs(d.segments[1]!.startMs - truth[1]!.startMs) < 500, `the second turn starts at ${d.segments[1]!.startMs} ms, truth ${Math.round(truth[1]!.startMs)}`)
  t.ok(Object.values(d.confidence ?? {}).every((c) => c >= 0 && c <= 1) && Object.keys(d.confidence ?? {}).length === 2, `a confidence per speaker: ${JSON.stringify(d.confidence)}`)

  const turns = await models.turns({ wavPath: wav, speakers: null })
  const boundary = turns.turns.find((x) => x.speaker !== turns.turns[0]!.speaker)!
  t.ok(Math.abs(boundary.startMs - truth[1]!.startMs) < 400, `the diarizer's own turn change at ${boundary.startMs} ms, truth ${Math.round(truth[1]!.startMs)}`)

  const one = await diarizer.diarize({ wavPath: wav, segments, speakers: 1 })
  t.equal(one.speakerCount, 1, 'a hint of one speaker is honoured')
  const two = await diarizer.diarize({ wavPath: wav, segments, speakers: 2 })
  t.same(two.segments.map((s) => [s.speaker, s.text]), d.segments.map((s) => [s.speaker, s.text]), 'the right hint changes nothing')
})

t.test('word starts come from the speech activity, not from the silence before them', async (t) => {
  const seg = (startMs: number, words: [string, number, number][]) => ({ startMs, endMs: words.at(-1)![2], text: words.map((w) => w[0]).join(' '), words: words.map(([text, s, e]) => ({ text, startMs: s, endMs: e })) })
  const speech = [
    { startMs: 1200, endMs: 2600 },
    { startMs: 4000, endMs: 5000 },
  ]
  const out = startsFromSpeech([seg(0, [['Hello', 0, 1500], ['there.', 1500, 2500]]), seg(2600, [['Okay', 2700, 4300], ['then.', 4300, 4900]])], speech)
  t.same(out.map((s) => [s.startMs, s.words.map((w) => w.startMs)]), [
    [1200, [1200, 1500]],
    [4000, [4000, 4300]],
  ], 'the first word of the recording and a word after a pause start where the speech does')
  t.same(startsFromSpeech(out, speech), out, 'words that start in speech stay')
  t.same(startsFromSpeech([seg(0, [['Hi', 0, 500]])], []), [seg(0, [['Hi', 0, 500]])], 'no speech ranges: nothing moves')
  const noWords = startsFromSpeech([{ startMs: 0, endMs: 3000, text: 'Hi', words: null }], speech)
  t.equal(noWords[0]!.startMs, 1200, 'a segment without words (ending after its speech) starts with the speech too')
  t.same(startsFromSpeech([seg(3000, [['Hm', 3000, 3500]])], speech)[0]!.startMs, 3000, 'a word wholly in a pause stays where the recognizer put it')
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
  const { segments, ids } = labelSegments([seg], spans)
  t.match(segments, [
    { speaker: '1', startMs: 0, endMs: 1200, text: 'Are you ready?' },
    { speaker: '2', startMs: 2000, endMs: 4000, text: 'Yes I am.' },
  ])
  t.same([...ids], [
    [4, '1'],
    [7, '2'],
  ])
  const noWords = labelSegments([{ ...seg, words: null }], spans).segments
  t.match(noWords, [{ speaker: '1', text: 'Are you ready? Yes I am.' }], 'without word timings the segment keeps one speaker (the one covering most of it)')
})

t.test("a segment's ends move out to its speaker's turn, never past a neighbour", async (t) => {
  const seg = (speaker: string, startMs: number, endMs: number): RecognizedSegment => ({ startMs, endMs, text: 'x', speaker, confidence: null, words: null })
  const turns = [
    { startMs: 900, endMs: 3000, speaker: 0 },
    { startMs: 3100, endMs: 6000, speaker: 1 },
    { startMs: 6050, endMs: 9000, speaker: 0 },
  ]
  const labelOf = new Map([
    ['1', 0],
    ['2', 1],
  ])
  const out = fitToTurns([seg('1', 1000, 2600), seg('2', 3400, 5500), seg('2', 5600, 5700), seg('1', 6500, 7000)], turns, labelOf)
  t.same(out.map((s) => [s.startMs, s.endMs]), [
    [900, 3000],
    [3100, 5600],
    [5600, 6000],
    [6050, 8000],
  ], 'out to the turn, but not over the next segment, and at most 1 s')
  t.same(fitToTurns([seg('9', 10, 20)], turns, labelOf), [seg('9', 10, 20)], 'a speaker the turns do not know stays as it is')
})

t.test('speech activity falls back to loudness while the trained VAD cannot run, and says so once', async (t) => {
  const lines: string[] = []
  const failing = { detect: async () => Promise.reject(new Error('no runtime')) }
  const loud = { detect: async () => [{ startMs: 1, endMs: 2 }] }
  const activity = preferredActivity(failing, loud, (l) => lines.push(l))
  t.same(await activity.detect('a.wav'), [{ startMs: 1, endMs: 2 }])
  t.same(await activity.detect('b.wav'), [{ startMs: 1, endMs: 2 }])
  t.equal(lines.length, 1)
  t.match(lines[0], /no runtime.*loudness/)
  const missing = onnxDiarizer({ modelsDir: join(tmp.dir, 'none'), python: 'python3', threads: 1 })
  t.rejects(missing.detect('x.wav'), /not installed.*diarizer-setup/, 'a request never fetches the models itself')
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
