// Issue 16 item 2: a maximum duration per plan, refused before anything is charged, and an
// import's price held while it is transcribed, captured only when the note becomes ready and
// released when it fails. The ledger stays exact (the auditor's replay) every way.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { wavBytes } from './support/media.ts'
import { audit, createImport, dialogue, json, startAsrServer, waitForNote } from './support/pipeline.ts'
import { ledgerEvents, balance } from './support/ledger.ts'
import { usageStream } from '../domain/usage/usage.ts'

const tmp = tempDir('credits-duration-')
t.teardown(tmp.remove)
const short = await dialogue(tmp.dir)
const long = join(tmp.dir, 'long.mp3')
// The dialogue padded with silence to 130 s: three started minutes, 150 credits.
await promisify(execFile)(ffmpegPath(), ['-y', '-loglevel', 'error', '-i', short, '-af', 'apad', '-t', '130', '-c:a', 'libmp3lame', '-b:a', '32k', long])
const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)
const web = await startHttpServer({
  '/long.mp3': { body: await readFile(long), headers: { 'content-type': 'audio/mpeg' } },
})
t.teardown(web.close)
const s = await testService({
  env: {
    IMPORT_ALLOW_HOSTS: '127.0.0.1',
    ASR_BASE_URL: asr.baseUrl,
    JOB_POLL_MS: '20',
    JOB_BACKOFF_BASE_MS: '50',
    JOB_MAX_ATTEMPTS: '2',
    // The team plan transcribes at most one minute per note here.
    PLAN_MAX_DURATION_MINUTES: 'team=1',
  },
  workers: true,
})
t.teardown(s.close)
const types = async (accountId: string) => (await ledgerEvents(s, accountId)).map((e) => e.type).slice(2)

t.test('given a 130 s import, while it is transcribed only a hold of its price exists; it is captured when the note is ready', async (t) => {
  const a = await s.account('pro')
  const held = asr.holdRequests()
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/long.mp3') })
  await held.seen
  t.same(await types(a.accountId), ['CreditsReserved', 'CreditsHoldExtended'], 'while transcribing: held, nothing captured')
  t.match((await ledgerEvents(s, a.accountId)).at(-1), { data: { by: 100, amount: 150, balanceAfter: 4850 } })
  held.release()
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready' })
  t.same(await types(a.accountId), ['CreditsReserved', 'CreditsHoldExtended', 'CreditsCaptured'])
  t.match((await ledgerEvents(s, a.accountId)).at(-1), { type: 'CreditsCaptured', data: { reserved: 150, cost: 150, balanceAfter: 4850 } })
  const { result } = await audit(s, a.accountId)
  t.same({ ok: result.ok, balance: result.balance }, { ok: true, balance: 4850 })
})

t.test('given the transcription fails after the hold grew, then the whole hold is released and nothing captured', async (t) => {
  const a = await s.account('pro')
  asr.failNext(10)
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/long.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId)
  asr.failNext(0)
  t.match(note, { status: 'failed', errorCode: 'asr_failed' })
  t.same(await types(a.accountId), ['CreditsReserved', 'CreditsHoldExtended', 'CreditsReleased'])
  t.match((await ledgerEvents(s, a.accountId)).at(-1), { data: { amount: 150, balanceAfter: 5000 } })
  t.same((await audit(s, a.accountId)).result.problems, [])
})

t.test('given an import longer than the plan allows, then the note fails with duration_limit_exceeded and only its first hold existed, released', async (t) => {
  const a = await s.account('team')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/long.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'failed', errorCode: 'duration_limit_exceeded' })
  t.same(await types(a.accountId), ['CreditsReserved', 'CreditsReleased'], 'the price never grew, nothing was captured')
  t.equal(await balance(s, a.accountId), 5000)
  t.same((await audit(s, a.accountId)).result.problems, [])
})

t.test('given an upload longer than the plan allows, then finalize is 413 duration_limit_exceeded and no minute or credit is taken', async (t) => {
  const a = await s.account('team')
  const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify({ filename: 'long.wav', contentType: 'audio/wav' }) })
  const { noteId, upload } = r.json()
  const u = new URL(upload.url)
  await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'audio/wav' }, payload: wavBytes(75) })
  const f = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })
  t.equal(f.statusCode, 413)
  t.match(f.json(), { error: 'duration_limit_exceeded', maxDurationSeconds: 60, durationSeconds: 75, message: /team plan transcribes at most 60 s/ })
  const usage = (await s.services.events.readStream(usageStream.of(a.accountId))).events.map((e) => e.type)
  t.notOk(usage.includes('MinutesReserved') || usage.some((x) => /Minutes/.test(x)), `no minutes taken (${usage.join(', ') || 'no usage events'})`)
  t.same(await types(a.accountId), [], 'no credit event')
  const shorter = await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'audio/wav' }, payload: wavBytes(30) })
  t.ok(shorter.statusCode < 300, 'the note still waits for a file that fits')
  t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })).statusCode, 202)
})
