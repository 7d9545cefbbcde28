// What a person waits for when they correct who said a line on the note page, on a long meeting:
//
//   npx tsx bench/line-speaker.ts        knobs: LINES (2,000: about three hours of talk), ROUNDS (50)
//
// The service on the embedded default (SQLite events, embedded read models) in one process, a
// ready note of LINES lines of two speakers seeded through the event store. Each round is what
// the note page waits for: the command (its projections caught up, notes and speakers:
// read-your-writes; it answers the speakers), then the transcript read the page shows again. Next to it in the same run:
//   - read only: the transcript read alone (the floor every correction pays for its answer);
//   - rename: PATCH speakers/{label}, an existing command on the same stream, then the same read.
// A merge moves every line of one speaker in one event; it is timed alone, a few times.
import { randomUUID } from 'node:crypto'
import { loadConfig } from '../app/config.ts'
import { startService } from '../app/server.ts'
import { noteStream } from '../domain/notes/note.ts'
import type { Caller } from '../commands/context.ts'
import { envInt, fmtMs, machine, machineLoad, now, stats, tempDir } from './lib.ts'

const LINES = envInt('LINES', 2000)
const ROUNDS = envInt('ROUNDS', 50)
const { dir, cleanup } = tempDir('line-speaker')

console.log(`${machine()}\n${machineLoad()}`)
const service = await startService(loadConfig({ DATA_DIR: dir, PORT: '0', MCP_PORT: '0', SEED_DEMO: '0', LOG_LEVEL: 'warn', ROLES: 'api,projections' }), () => {})
const s = service.services
const { accountId } = await s.accounts.openAccount({ name: 'bench', plan: 'power' })
const caller = (): Caller => ({ accountId, plan: 'power', keyId: null, requestId: randomUUID(), via: 'dashboard' })

/** A ready note of `LINES` lines, A and B taking turns, seeded as the pipeline records one. */
async function longNote(): Promise<string> {
  const noteId = randomUUID()
  const at = new Date().toISOString()
  const segments = Array.from({ length: LINES }, (_, k) => {
    const words = `line ${k} of a long meeting about the budget, the launch date and who sends the report`.split(' ')
    const startMs = k * 5000
    return {
      id: randomUUID(),
      sequence: k,
      startMs,
      endMs: startMs + 4800,
      speakerLabel: k % 2 ? 'B' : 'A',
      text: words.join(' '),
      confidence: 0.9,
      locale: 'en',
      words: words.map((text, w) => ({ text, startMs: startMs + w * 250, endMs: startMs + w * 250 + 240 })),
    }
  })
  const transcript = { language: 'en', languagesDetected: ['en'], durationSeconds: LINES * 5, engine: 'bench', provider: null, model: null, segments }
  const ev = (type: string, data: Record<string, unknown>) => ({ id: randomUUID(), type, data: { ...data, at } })
  const r = await s.events.appendToStream(
    noteStream.of(noteId),
    [
      ev('NoteCreated', { noteId, accountId, sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'Long meeting', language: null, keepAudio: false, upload: null, jobId: null, reservationId: null }),
      ev('NoteTranscribed', { transcript }),
      ev('NoteReady', { durationSeconds: LINES * 5, language: 'en' }),
    ],
    { expectedRevision: 'no_stream' },
  )
  for (const p of ['notes', 'speakers']) await s.sync.waitFor(p, r.lastGlobalPosition)
  return noteId
}

const read = (noteId: string) => s.queries.transcripts.get(accountId, noteId, { limit: undefined })
async function timed(rounds: number, op: (round: number) => Promise<unknown>) {
  const ms: number[] = []
  const t0 = now()
  for (let i = 0; i < rounds; i++) {
    const t = now()
    await op(i)
    ms.push(now() - t)
  }
  return stats(ms, (now() - t0) / 1000)
}

const noteId = await longNote()
const bytes = JSON.stringify(await read(noteId)).length
await timed(5, () => read(noteId)) // warm-up
const rows: [string, ReturnType<typeof stats>][] = [
  ['read only (the answer)', await timed(ROUNDS, () => read(noteId))],
  ['rename a speaker + read', await timed(ROUNDS, async (i) => (await s.transcripts.renameSpeaker(caller(), noteId, 'A', `Alice ${i}`), read(noteId)))],
  // Line i goes to the other speaker: every round a real change.
  ['move a line + read', await timed(ROUNDS, async (i) => (await s.transcripts.changeSegmentSpeaker(caller(), noteId, i, i % 2 ? 'A' : 'B'), read(noteId)))],
]
const fresh = [await longNote(), await longNote(), await longNote()]
const merges = await timed(fresh.length, async (i) => (await s.transcripts.mergeSpeaker(caller(), fresh[i]!, 'B', 'A'), read(fresh[i]!)))
const check = await read(noteId)
const movedRight = check.segments.slice(0, ROUNDS).every((x, i) => x.speakerLabel === (i % 2 ? 'A' : 'B'))

console.log(`\n${LINES} lines, transcript answer ${(bytes / 1024).toFixed(0)} KiB; ${ROUNDS} rounds each (ms)`)
console.log(`${'operation'.padEnd(28)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'max'.padStart(8)}`)
for (const [name, st] of rows) console.log(`${name.padEnd(28)} ${fmtMs(st.p50).padStart(8)} ${fmtMs(st.p95).padStart(8)} ${fmtMs(st.max).padStart(8)}`)
console.log(`${`merge ${LINES / 2} lines + read`.padEnd(28)} ${fmtMs(merges.p50).padStart(8)} ${''.padStart(8)} ${fmtMs(merges.max).padStart(8)}   (3 notes)`)
console.log(`every moved line read back with its new speaker: ${movedRight ? 'yes' : 'NO'}`)
console.log(machineLoad())
await service.close()
cleanup()
if (!movedRight) process.exit(1)
