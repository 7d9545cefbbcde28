// The transcription job on the note stream, as a decider: given events, when a command, then
// events or a refusal (the shared DeciderSpecification). Claims, leases, backoff, attempt limits,
// and writes of a lost lease.
import t from 'tap'
import { type NoteEvent } from '../domain/notes/note.ts'
import { exponentialBackoff, type LeaseTerms, type TranscriptionCommand } from '../domain/notes/transcriptionJob.ts'
import { transcriptionDecider } from '../domain/notes/transcriptionDecider.ts'
import { DeciderSpecification } from './support/decider.ts'

const job = DeciderSpecification.for(transcriptionDecider)

const T0 = '2026-03-01T10:00:00.000Z'
const at = (ms: number) => new Date(new Date(T0).getTime() + ms).toISOString()
const terms: LeaseTerms = { leaseMs: 1000, maxAttempts: 3, backoffMs: exponentialBackoff(100, 1000) }
const created: NoteEvent = {
  type: 'NoteCreated',
  data: { noteId: 'n1', accountId: 'acc', sourceType: 'url', origin: 'audio', provider: 'direct', sourceUrl: 'https://media.example.org/a.mp3', title: 'a', language: null, keepAudio: false, upload: null, jobId: 'job1', reservationId: 'res1', at: T0 },
}
const claim = (workerId: string, ms: number): TranscriptionCommand => ({ type: 'ClaimTranscription', workerId, terms, now: at(ms) })
const started = (workerId: string, attempt: number, ms: number): NoteEvent => ({
  type: 'TranscriptionStarted',
  data: { jobId: 'job1', workerId, attempt, leaseExpiresAt: at(ms + 1000), retryAt: at(ms + 1000 + terms.backoffMs(attempt)), at: at(ms) },
})

t.test('given a queued import, when a worker claims it, then attempt 1 starts with a lease and a retry time after it', async (t) => {
  job.given([created]).when(claim('w1', 0)).then(t, [started('w1', 1, 0)])
  job.given([]).when(claim('w1', 0)).thenThrows(t, 'not_found')
})

t.test('given a running job, when another worker claims before the lease plus backoff is over, then it is refused', async (t) => {
  job.given([created, started('w1', 1, 0)]).when(claim('w2', 500)).thenThrows(t, 'conflict')
  job.given([created, started('w1', 1, 0)]).when(claim('w2', 1050)).thenThrows(t, 'conflict')
})

t.test('given a lease that ran out (plus backoff), when another worker claims, then attempt 2 is its own', async (t) => {
  job.given([created, started('w1', 1, 0)]).when(claim('w2', 1100)).thenMatches(t, [{ type: 'TranscriptionStarted', data: { workerId: 'w2', attempt: 2 } }])
})

t.test('given progress renewed the lease, then the job is not claimable until the new expiry', async (t) => {
  const report = job.given([created, started('w1', 1, 0)]).when({ type: 'ReportProgress', workerId: 'w1', attempt: 1, stage: 'transcribing', percent: 50, terms, now: at(900) })
  report.thenMatches(t, [{ type: 'TranscriptionProgressed', data: { leaseExpiresAt: at(1900), retryAt: at(2000) } }])
  job.given([created, started('w1', 1, 0), ...report.events()]).when(claim('w2', 1500)).thenThrows(t, 'conflict')
})

t.test('given another attempt took over, when the first worker reports, completes or fails, then it is refused: a lost lease writes nothing', async (t) => {
  const lost = job.given([created, started('w1', 1, 0), started('w2', 2, 1200)])
  lost.when({ type: 'ReportProgress', workerId: 'w1', attempt: 1, stage: 'decoding', percent: null, terms, now: at(1300) }).thenThrows(t, 'conflict')
  lost
    .when({ type: 'CompleteTranscription', workerId: 'w1', attempt: 1, transcript: { language: null, languagesDetected: [], durationSeconds: 1, engine: 'x', provider: null, model: null, segments: [] }, durationSeconds: 1, language: null, now: at(1300) })
    .thenThrows(t, 'conflict')
  lost.when({ type: 'FailTranscription', workerId: 'w1', attempt: 1, errorCode: 'asr_failed', message: 'x', retriable: false, terms, now: at(1300) }).thenThrows(t, 'conflict')
})

t.test('given a passing failure with attempts left, then the attempt fails with a backoff; the last one fails the note', async (t) => {
  const fail = (attempt: number, ms: number): TranscriptionCommand => ({ type: 'FailTranscription', workerId: 'w1', attempt, errorCode: 'download_failed', message: 'timeout', retriable: true, terms, now: at(ms) })
  const firstFailed: NoteEvent = { type: 'TranscriptionAttemptFailed', data: { jobId: 'job1', attempt: 1, errorCode: 'download_failed', message: 'timeout', retryAt: at(110), at: at(10) } }
  job.given([created, started('w1', 1, 0)]).when(fail(1, 10)).then(t, [firstFailed])
  job.given([created, started('w1', 1, 0), firstFailed]).when(claim('w1', 50)).thenThrows(t, 'conflict')
  const h3 = [created, started('w1', 1, 0), firstFailed, started('w1', 2, 200)]
  const second = job.given(h3).when(fail(2, 210))
  second.thenMatches(t, [{ type: 'TranscriptionAttemptFailed', data: { retryAt: at(410) } }], 'the backoff doubles')
  job.given([...h3, ...second.events(), started('w1', 3, 500)]).when(fail(3, 520)).thenMatches(t, [{ type: 'NoteFailed', data: { errorCode: 'download_failed' } }])
  job.given([created, started('w1', 1, 0)]).when({ ...fail(1, 10), retriable: false } as TranscriptionCommand).thenMatches(t, [{ type: 'NoteFailed' }], 'a permanent failure fails at once')
})

t.test('given every attempt lost its lease, when the next claim comes, then the note fails with processing_timeout', async (t) => {
  const history = [created, started('w1', 1, 0), started('w2', 2, 2000), started('w3', 3, 4000)]
  job.given(history).when(claim('w4', 6000)).thenMatches(t, [{ type: 'NoteFailed', data: { errorCode: 'processing_timeout' } }])
})

t.test('given a failed note, when it is settled twice, then once', async (t) => {
  const failed: NoteEvent = { type: 'NoteFailed', data: { errorCode: 'source_not_found', message: '404', at: at(10) } }
  const settle: TranscriptionCommand = { type: 'SettleTranscription', credits: 'released', creditsReturned: 50, minutesReleased: false, now: at(20) }
  const settled = job.given([created, started('w1', 1, 0), failed]).when(settle)
  settled.thenMatches(t, [{ type: 'TranscriptionSettled', data: { credits: 'released', creditsReturned: 50 } }])
  job.given([created, started('w1', 1, 0), failed, ...settled.events()]).when(settle).thenNothingHappened(t, 'settling twice is a retry')
  job.given([created, started('w1', 1, 0), failed]).when(claim('w2', 5000)).thenThrows(t, 'conflict')
  job.given([created, started('w1', 1, 0)]).when(settle).thenNothingHappened(t, 'a running job is not settled')
})

t.test('the note stream folds the pipeline events: phase, source description', async (t) => {
  const described: NoteEvent = { type: 'NoteSourceDescribed', data: { title: 'Episode 7', description: 'About things', recordedAt: '2025-01-01T00:00:00.000Z', durationSeconds: 61, at: at(5) } }
  const history = [created, started('w1', 1, 0), described]
  t.match(job.given(history).state(), { phase: 'processing', title: 'Episode 7', description: 'About things', recordedAt: '2025-01-01T00:00:00.000Z', durationSeconds: 61, job: { attempt: 1, workerId: 'w1', running: true } })
  job.given(history).when({ type: 'DescribeSource', workerId: 'w1', attempt: 1, title: 'Episode 7', now: at(6) }).thenNothingHappened(t, 'nothing new, no event')
})

t.test('given a stopping worker hands its attempt back, then another worker claims at once, the attempt does not count, and the old holder writes nothing', async (t) => {
  const release: TranscriptionCommand = { type: 'ReleaseTranscription', workerId: 'w1', attempt: 1, reason: 'worker w1 stopped', now: at(200) }
  const released = job.given([created, started('w1', 1, 0)]).when(release).events()
  t.match(released, [{ type: 'TranscriptionReleased', data: { jobId: 'job1', attempt: 1, workerId: 'w1', at: at(200) } }])
  const history = [created, started('w1', 1, 0), ...released]
  t.match(job.given(history).state(), { phase: 'queued', job: { running: false, claimableAt: at(200), handedBack: 1 } })
  job.given(history).when(claim('w2', 201)).thenMatches(t, [{ type: 'TranscriptionStarted', data: { workerId: 'w2', attempt: 2 } }], 'claimable at once, long before the lease would have run out')
  job.given(history).when({ type: 'ReportProgress', workerId: 'w1', attempt: 1, stage: 'decoding', percent: null, terms, now: at(300) }).thenThrows(t, 'conflict')
  job.given([created, started('w1', 1, 0), started('w2', 2, 1200)]).when(release).thenThrows(t, 'conflict')
  // Three handed-back attempts and a fourth claim: the limit (3) counts only attempts that ran to an end.
  const handedBack = (n: number, ms: number): NoteEvent[] => [
    started(`w${n}`, n, ms),
    ...job
      .given([created, ...Array.from({ length: n - 1 }, (_, i) => [started(`w${i + 1}`, i + 1, i * 10), { type: 'TranscriptionReleased', data: { jobId: 'job1', attempt: i + 1, workerId: `w${i + 1}`, reason: 'r', at: at(i * 10 + 5) } } as NoteEvent]).flat(), started(`w${n}`, n, ms)])
      .when({ type: 'ReleaseTranscription', workerId: `w${n}`, attempt: n, reason: 'r', now: at(ms + 5) })
      .events(),
  ]
  const three = [created, ...handedBack(1, 0), ...handedBack(2, 10), ...handedBack(3, 20)]
  job.given(three).when(claim('w4', 100)).thenMatches(t, [{ type: 'TranscriptionStarted', data: { attempt: 4 } }], 'not failed for attempts it never used')
})
