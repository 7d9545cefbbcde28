// Lying durations (issue 26, item 3): an MP3 whose Xing/Info header claims 40 frames probes at
// about 1.4 s and decodes 150 s. Price, minutes, the plan's limit and chunking follow the decoded
// audio (its sample count): the import's hold grows to 150 credits and that is captured, an upload
// counts 3 minutes, a plan allowing 2 minutes refuses it, and the audio is recognized in chunks.
// The decoded length is recorded on the note (NoteReady.decodedSeconds), and the auditor's price
// rule holds each import's capture against it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { audit, createImport, dialogue, startAsrServer, waitForNote } from './support/pipeline.ts'
import { uploadNote } from './support/upload.ts'
import { usageStream } from '../domain/usage/usage.ts'
import { auditAccountLedger } from '../readmodels/creditAudit.ts'

const tmp = tempDir('lying-duration-')
t.teardown(tmp.remove)
// 150 s of speech (the dialogue over and over), then its Info header's frame count set to 40.
const honest = join(tmp.dir, 'long.mp3')
await promisify(execFile)(ffmpegPath(), ['-y', '-loglevel', 'error', '-stream_loop', '-1', '-i', await dialogue(tmp.dir), '-t', '150', '-ac', '1', '-ar', '32000', '-c:a', 'libmp3lame', '-b:a', '32k', honest])
const lying = Buffer.from(await readFile(honest))
const tag = Math.max(lying.indexOf('Xing'), lying.indexOf('Info'))
lying.writeUInt32BE(40, tag + 8) // flags (tag + 4) say the frame count follows

const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)
const web = await startHttpServer({ '/talk.mp3': { body: lying, headers: { 'content-type': 'audio/mpeg' } } })
t.teardown(web.close)
const s = await testService({
  workers: true,
  env: { IMPORT_ALLOW_HOSTS: '127.0.0.1', ASR_BASE_URL: asr.baseUrl, JOB_POLL_MS: '20', JOB_CHUNK_SECONDS: '60', PLAN_MAX_DURATION_MINUTES: 'power=2' },
})
t.teardown(s.close)
const noteEvents = async (noteId: string) => (await s.services.events.readStream(`note-${noteId}`)).events

t.test('the file lies: it probes at under 2 s', async (t) => {
  const { writeFile } = await import('node:fs/promises')
  await writeFile(join(tmp.dir, 'lying.mp3'), lying)
  const info = await s.services.ingest.probe.probe(join(tmp.dir, 'lying.mp3'))
  t.ok(info && info.durationSeconds < 2, `probed ${info?.durationSeconds} s`)
})

t.test('an import is priced, recorded and chunked by its 150 s of audio; the auditor agrees', async (t) => {
  const a = await s.account('pro')
  const before = asr.calls.length
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId, 120_000)
  t.match(note, { status: 'ready', durationSeconds: 150 })
  const { result, events } = await audit(s, a.accountId)
  t.ok(events.some((e) => e.type === 'CreditsHoldExtended' && e.data.amount === 150), 'the hold grew to 150 credits')
  t.match(events.find((e) => e.type === 'CreditsCaptured'), { data: { cost: 150 } }, '3 started minutes, 150 credits')
  t.same({ ok: result.ok, balance: result.balance }, { ok: true, balance: 5000 - 150 })
  const ready = (await noteEvents(noteId)).find((e) => e.type === 'NoteReady')
  t.ok(Math.abs((ready!.data as { decodedSeconds: number }).decodedSeconds - 150) < 0.5, 'the decoded length is on record')
  t.ok(asr.calls.length - before >= 2, `recognized in chunks (${asr.calls.length - before} requests)`)
  const audited = await auditAccountLedger({ events: s.services.events, docs: s.docs, sync: s.services.sync, holdLeaseMs: 3_600_000 }, a.accountId)
  t.same(audited!.problems, [], 'npm run audit-ledger finds nothing wrong')
})

t.test('an upload counts the 3 minutes its audio holds, not the 1 its header claims', async (t) => {
  const a = await s.account('pro')
  const { noteId, finalize } = await uploadNote(s, a.headers, lying, 'talk.mp3')
  t.equal(finalize.status, 202)
  const { note } = await waitForNote(s, a.headers, noteId, 120_000)
  t.match(note, { status: 'ready', durationSeconds: 150 })
  const reserved = (await s.services.events.readStream(usageStream.of(a.accountId))).events.filter((e) => e.type === 'MinutesReserved')
  t.equal(reserved.reduce((n, e) => n + (e.data as { minutes: number }).minutes, 0), 3, '1 minute at finalize, 2 more once decoded')
})

t.test("the plan's maximum duration holds: on a plan allowing 2 minutes, the import and the upload fail and cost nothing", async (t) => {
  const a = await s.account('power')
  const { result: start } = await audit(s, a.accountId)
  const imported = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  const uploaded = await uploadNote(s, a.headers, lying, 'talk.mp3')
  t.equal(uploaded.finalize.status, 202, 'its header passes finalize')
  for (const noteId of [imported, uploaded.noteId]) t.match((await waitForNote(s, a.headers, noteId, 120_000)).note, { status: 'failed', errorCode: 'duration_limit_exceeded' })
  const { result, events } = await audit(s, a.accountId)
  t.same({ ok: result.ok, balance: result.balance }, { ok: true, balance: start.balance })
  t.notOk(events.some((e) => e.type === 'CreditsCaptured'))
  const usage = (await s.services.events.readStream(usageStream.of(a.accountId))).events
  t.ok(usage.some((e) => e.type === 'MinutesReleased' && (e.data as { noteId: string }).noteId === uploaded.noteId), "the upload's minutes came back")
})
