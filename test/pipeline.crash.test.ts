// A worker killed mid-job (a real process, SIGKILL) does not leave the note processing: its
// lease runs out, another worker claims the next attempt, and the note becomes ready, charged
// once. While the first worker lives, its heartbeat keeps the lease and nobody else claims.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { pollUntil } from './support/pollUntil.ts'
import { startHttpServer } from './support/httpServer.ts'
import { audit, createImport, dialogue, startAsrServer, waitForNote } from './support/pipeline.ts'

const tmp = tempDir('pipeline-crash-')
t.teardown(tmp.remove)
const mp3Bytes = await readFile(await dialogue(tmp.dir))
const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)
const web = await startHttpServer({ '/talk.mp3': { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } } })
t.teardown(web.close)

const env = {
  IMPORT_ALLOW_HOSTS: '127.0.0.1',
  ASR_BASE_URL: asr.baseUrl,
  JOB_POLL_MS: '20',
  JOB_PROGRESS_INTERVAL_MS: '20',
  JOB_LEASE_MS: '1000',
  JOB_BACKOFF_BASE_MS: '100',
  JOB_MAX_ATTEMPTS: '3',
}
const s = await testService({ env })
t.teardown(s.close)

async function startChild(id: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/workerProcess.ts'], {
    env: { ...process.env, ...env, DATA_DIR: s.dir, PORT: '3000', WORKER_ID: id },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  child.stderr!.on('data', (d) => (err += d))
  const [line] = (await Promise.race([once(child.stdout!, 'data'), once(child, 'exit').then(() => [Buffer.from(`exited: ${err}`)])])) as Buffer[]
  if (!String(line).includes('ready')) throw new Error(`worker process did not start: ${String(line)}`)
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  return child
}

const noteEvents = async (noteId: string) => (await s.services.events.readStream(`note-${noteId}`)).events

t.test('given a worker process killed with SIGKILL while transcribing, then another worker retries and the note becomes ready', async (t) => {
  const child = await startChild('doomed-worker')
  const a = await s.account('pro')
  const hold = asr.holdRequests()
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  await hold.seen
  const started = (await noteEvents(noteId)).filter((e) => e.type === 'TranscriptionStarted')
  t.match(started, [{ data: { workerId: 'doomed-worker', attempt: 1 } }], 'the child process claimed the job')

  // Another worker runs meanwhile: the child's heartbeat keeps the lease, so nobody else claims,
  // however long that is: here, until the renewals have carried it past two lease lengths.
  s.startWorkers()
  const claimedAt = Date.parse((started[0]!.data as { at: string }).at)
  const renewedPast = (ms: number) => async () => (await noteEvents(noteId)).some((e) => e.type === 'TranscriptionProgressed' && Date.parse((e.data as { at: string }).at) - claimedAt > ms)
  await pollUntil('the lease renewed by progress events past two lease lengths', renewedPast(2 * Number(env.JOB_LEASE_MS)), 60_000, 50)
  t.equal((await noteEvents(noteId)).filter((e) => e.type === 'TranscriptionStarted').length, 1, 'no second claim while the lease is renewed')

  child.kill('SIGKILL')
  await once(child, 'exit')
  hold.release()

  const { note, progress } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'ready', errorCode: null })
  t.ok(progress.some((p: any) => p.attempt === 2), 'attempt 2 was visible while polling')
  const claims = (await noteEvents(noteId)).filter((e) => e.type === 'TranscriptionStarted')
  t.equal(claims.length, 2)
  t.equal(claims[1]!.data.attempt, 2)
  t.not(claims[1]!.data.workerId, 'doomed-worker')
  const { result, events } = await audit(s, a.accountId)
  t.ok(result.ok)
  t.equal(result.balance, 4950, 'charged once')
  t.equal(events.filter((e) => e.type === 'CreditsCaptured').length, 1)
})

t.test('given two worker processes polling the same jobs, then every job is claimed exactly once', async (t) => {
  await startChild('rival-worker')
  const a = await s.account('pro')
  const ids = await Promise.all([1, 2, 3, 4].map(() => createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })))
  for (const id of ids) t.match((await waitForNote(s, a.headers, id)).note, { status: 'ready' })
  const owners = new Set<string>()
  for (const id of ids) {
    const claims = (await noteEvents(id)).filter((e) => e.type === 'TranscriptionStarted')
    t.equal(claims.length, 1, `note ${id.slice(0, 8)} claimed once`)
    owners.add(String(claims[0]!.data.workerId))
  }
  t.ok(owners.size >= 1)
  t.equal((await audit(s, a.accountId)).result.balance, 5000 - 4 * 50)
})
