// Fair scheduling, as pure rules: the claim order is round-robin over accounts (fewest running
// first), long audio is cut in pauses, and turns at the engine rotate between accounts.
// Issue 16, item 1.
import t from 'tap'
import { chunkSpans, fairOrder } from '../domain/notes/scheduling.ts'
import { FairTurns } from '../workers/turns.ts'
import { pcm16MonoLayout, wavFromPcm } from '../domain/audio/pcm.ts'
import { defaultConcurrency } from '../app/pipelineConfig.ts'
import { mergeChunks } from '../workers/transcription.ts'

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString()

t.test('given many old jobs of A and one new job of B, when ordered, then B comes second, not last', async (t) => {
  const due = [1, 2, 3, 4].map((i) => ({ id: `a${i}`, accountId: 'A', dueAt: at(i) })).concat([{ id: 'b1', accountId: 'B', dueAt: at(10) }])
  t.same(fairOrder(due, new Map()).map((j) => j.id), ['a1', 'b1', 'a2', 'a3', 'a4'])
})

t.test('given A already runs a job, when ordered, then every other account goes first', async (t) => {
  const due = [
    { id: 'a2', accountId: 'A', dueAt: at(1) },
    { id: 'c1', accountId: 'C', dueAt: at(3) },
    { id: 'b1', accountId: 'B', dueAt: at(2) },
  ]
  t.same(fairOrder(due, new Map([['A', 1]])).map((j) => j.id), ['b1', 'c1', 'a2'])
})

t.test('long audio is cut near every chunk length, in the widest pause close by; short audio stays whole', async (t) => {
  t.same(chunkSpans(70_000, 60_000, []), [{ startMs: 0, endMs: 70_000 }], 'not much longer than a chunk: whole')
  t.same(chunkSpans(100_000, 0, []), [{ startMs: 0, endMs: 100_000 }], 'chunking off')
  t.same(chunkSpans(250_000, 100_000, []), [{ startMs: 0, endMs: 100_000 }, { startMs: 100_000, endMs: 200_000 }, { startMs: 200_000, endMs: 250_000 }], 'no pauses known: at the targets')
  t.same(chunkSpans(220_000, 100_000, []), [{ startMs: 0, endMs: 100_000 }, { startMs: 100_000, endMs: 220_000 }], 'a short remainder joins the last chunk')
  const speech = [
    { startMs: 0, endMs: 95_000 },
    { startMs: 95_400, endMs: 104_000 },
    { startMs: 106_000, endMs: 250_000 },
  ]
  const spans = chunkSpans(250_000, 100_000, speech)
  t.same(spans[0], { startMs: 0, endMs: 105_000 }, 'cut in the middle of the widest pause (104–106 s), not inside a word')
  t.equal(spans.at(-1)!.endMs, 250_000)
  for (let i = 1; i < spans.length; i++) t.equal(spans[i]!.startMs, spans[i - 1]!.endMs, 'contiguous')
})

t.test('given one turn held by a long job of A, when B asks, then B is served before A asks again', async (t) => {
  const turns = new FairTurns(1)
  const order: string[] = []
  const a1 = await turns.acquire('A')
  const b = turns.acquire('B').then((give) => (order.push('B'), give))
  const a2 = turns.acquire('A').then((give) => (order.push('A'), give))
  t.equal(turns.queued, 2)
  a1()
  ;(await b)()
  ;(await a2)()
  t.same(order, ['B', 'A'])
  const ac = new AbortController()
  const held = await turns.acquire('A')
  const gone = turns.acquire('B', ac.signal)
  ac.abort(new Error('stopping'))
  await t.rejects(gone, /stopping/, 'an aborted wait leaves the line')
  t.equal(turns.queued, 0)
  held()
})

t.test('the samples of the pipeline’s WAV are found from its header; other layouts are not sliced', async (t) => {
  const wav = wavFromPcm(Buffer.alloc(32), 16000)
  t.same(pcm16MonoLayout(wav), { dataOffset: 44, sampleRate: 16000 })
  const stereo = Buffer.from(wav)
  stereo.writeUInt16LE(2, 22)
  t.equal(pcm16MonoLayout(stereo), null)
  t.equal(pcm16MonoLayout(Buffer.from('not a wav file at all')), null)
})

t.test('concurrency defaults to the cores over the engine threads, and JOB_CONCURRENCY overrides it', async (t) => {
  const local = { engine: 'faster-whisper' as const, model: 'base', modelsDir: '/m', python: 'python3', threads: 2, computeType: 'int8', beamSize: 1, languages: [] }
  t.match(defaultConcurrency({}, local, 8), { value: 4, source: /8 cores \/ 2 engine threads/ })
  t.match(defaultConcurrency({}, local, 1), { value: 1 })
  t.match(defaultConcurrency({ JOB_CONCURRENCY: '3' }, local, 8), { value: 3, source: 'JOB_CONCURRENCY' })
  t.match(defaultConcurrency({}, { engine: 'openai-compatible', baseUrl: 'x', apiKey: null, model: 'm', maxUploadBytes: 1, timeoutMs: 1 }, 6), { value: 6 })
})

t.test('chunks merge into one recognition: times shifted, a language one chunk thought it heard does not count', async (t) => {
  const seg = (startMs: number, endMs: number, text: string) => ({ startMs, endMs, text, speaker: null, confidence: null, words: [{ text, startMs, endMs }] })
  const chunk = (i: number, language: string) => ({ span: { startMs: i * 60_000, endMs: (i + 1) * 60_000 }, r: { language, languages: [language], model: 'm', segments: [seg(1000, 50_000, `part ${i}`)] } })
  const merged = mergeChunks([chunk(0, 'en'), chunk(1, 'en'), chunk(2, 'en'), chunk(3, 'en'), chunk(4, 'en'), chunk(5, 'en'), chunk(6, 'de')])
  t.equal(merged.language, 'en')
  t.same(merged.languages, ['en'], 'one chunk of seven is under 15 %')
  t.same(merged.segments.map((x) => [x.startMs, x.endMs]), [0, 1, 2, 3, 4, 5, 6].map((i) => [i * 60_000 + 1000, i * 60_000 + 50_000]))
  t.same(merged.segments[6]!.words, [{ text: 'part 6', startMs: 361_000, endMs: 410_000 }])
  const both = mergeChunks([chunk(0, 'es'), chunk(1, 'en'), chunk(2, 'es')])
  t.same(both.languages, ['es', 'en'], 'a language of a third of the recording is one of its languages')
})
