// A long file of account A does not starve account B: with one recognition at a time
// (JOB_CONCURRENCY=1), B's short imports are ready while A's long one is still transcribing,
// because long audio is recognized in chunks and the job yields its turn between them. With
// chunking off (JOB_CHUNK_SECONDS=0, the old behaviour) B waits for A's whole file: the figures
// of both runs are printed. The engine is a fake behind the speech-engine port that takes
// 100 ms per second of audio, so the timing is deterministic. Issue 16, item 1.
//   npx tap test/pipeline.fairness.test.ts   (prints "fairness: ...")
import t from 'tap'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { createImport, waitForNote } from './support/pipeline.ts'
import { wavFromPcm } from './support/media.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'

const MS_PER_AUDIO_SECOND = 100
const LONG_SECONDS = 120
const SHORT_SECONDS = 3

/** A tone broken by pauses every second, so speech activity finds speech and places to cut. */
function talk(seconds: number): Buffer {
  const rate = 16000
  const data = Buffer.alloc(seconds * rate * 2)
  for (let i = 0; i < seconds * rate; i++) {
    const inPause = i % rate > rate * 0.7
    data.writeInt16LE(inPause ? 0 : Math.round(Math.sin((2 * Math.PI * 220 * i) / rate) * 8000), i * 2)
  }
  return wavFromPcm(data, rate)
}

/** Takes MS_PER_AUDIO_SECOND per second it is given, stops at once on abort. */
function slowEngine(calls: { seconds: number; startedAt: number }[]): SpeechEngine {
  return {
    engine: 'fake-slow',
    provider: 'local',
    model: 'fake',
    async transcribe(req) {
      calls.push({ seconds: req.durationSeconds, startedAt: Date.now() })
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => (clearTimeout(timer), reject(new Error('stopped')))
        const timer = setTimeout(() => (req.signal?.removeEventListener('abort', onAbort), resolve()), req.durationSeconds * MS_PER_AUDIO_SECOND)
        req.signal?.addEventListener('abort', onAbort, { once: true })
      })
      const ms = Math.round(req.durationSeconds * 1000)
      return { language: 'en', model: 'fake', segments: [{ startMs: 0, endMs: ms, text: 'words were said here', speaker: null, confidence: null, words: null }] }
    },
  }
}

const tmp = tempDir('pipeline-fair-')
t.teardown(tmp.remove)
const web = await startHttpServer({
  '/long.wav': { body: talk(LONG_SECONDS), headers: { 'content-type': 'audio/wav' } },
  '/short.wav': { body: talk(SHORT_SECONDS), headers: { 'content-type': 'audio/wav' } },
})
t.teardown(web.close)

async function run(chunkSeconds: number) {
  const s = await testService({
    env: {
      IMPORT_ALLOW_HOSTS: '127.0.0.1',
      ASR_BASE_URL: 'http://127.0.0.1:9/v1',
      JOB_CONCURRENCY: '1',
      JOB_CHUNK_SECONDS: String(chunkSeconds),
      JOB_POLL_MS: '20',
      JOB_PROGRESS_INTERVAL_MS: '50',
      DIARIZATION: 'off',
    },
  })
  const calls: { seconds: number; startedAt: number }[] = []
  s.services.ingest.engine = slowEngine(calls)
  s.startWorkers()
  try {
    const a = await s.account('pro')
    const b = await s.account('pro')
    const long = await createImport(s, a.headers, { audioUrl: web.url('/long.wav') })
    const deadline = Date.now() + 60_000
    while (calls.length === 0) {
      if (Date.now() > deadline) throw new Error('the long job never reached the engine')
      await new Promise((r) => setTimeout(r, 20))
    }
    const t0 = Date.now()
    const shorts = await Promise.all([1, 2, 3].map(() => createImport(s, b.headers, { audioUrl: web.url('/short.wav') })))
    const shortMs = await Promise.all(
      shorts.map(async (id) => {
        const { note } = await waitForNote(s, b.headers, id, 120_000)
        if (note.status !== 'ready') throw new Error(`short note ${id} ${note.status}: ${note.errorCode}`)
        return Date.now() - t0
      }),
    )
    const longStatusWhenShortsDone = (await s.inject({ method: 'GET', url: `/v1/notes/${long}`, headers: a.headers })).json().status as string
    const longNote = (await waitForNote(s, a.headers, long, 120_000)).note
    const longMs = Date.now() - t0
    const transcript = (await s.inject({ method: 'GET', url: `/v1/notes/${long}/transcript`, headers: a.headers })).json()
    return { shortMs, longMs, longStatusWhenShortsDone, longNote, transcript, calls }
  } finally {
    await s.close()
  }
}

t.test('given a long job of A running, when B imports short files, then B’s are ready in bounded time while A’s is still transcribing', async (t) => {
  const after = await run(10)
  t.comment(`fairness (chunks of 10 s): B's 3 short jobs ready after ${after.shortMs.join(', ')} ms; A's ${LONG_SECONDS} s job after ${after.longMs} ms`)
  t.equal(after.longStatusWhenShortsDone, 'processing', 'B did not wait for the end of A’s file')
  const engineLongMs = LONG_SECONDS * MS_PER_AUDIO_SECOND
  t.ok(Math.max(...after.shortMs) < engineLongMs * 0.75, `every short job within ${engineLongMs * 0.75} ms (the long one alone needs ${engineLongMs} ms of engine time)`)
  t.match(after.longNote, { status: 'ready', durationSeconds: LONG_SECONDS })
  const chunks = after.calls.filter((c) => c.seconds > SHORT_SECONDS + 1)
  t.ok(chunks.length >= 10, `the long file went to the engine in chunks (${chunks.length})`)
  const segs = after.transcript.segments as { startMs: number; endMs: number }[]
  t.equal(segs.length, chunks.length, 'one segment per chunk, from the fake engine')
  for (let i = 1; i < segs.length; i++) t.ok(segs[i]!.startMs >= segs[i - 1]!.endMs - 1, 'chunk times shifted to the whole recording, in order')
  t.ok(segs.at(-1)!.endMs <= LONG_SECONDS * 1000 + 1 && segs.at(-1)!.endMs > (LONG_SECONDS - 15) * 1000, 'the last chunk ends at the end of the audio')

  const before = await run(0)
  t.comment(`fairness (chunking off, as before): B's 3 short jobs ready after ${before.shortMs.join(', ')} ms; A's job after ${before.longMs} ms`)
  t.ok(Math.min(...before.shortMs) > Math.max(...after.shortMs), 'without chunks B waits for the whole long file')
})
