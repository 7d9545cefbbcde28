// The transcription job's decider on the note stream (`note-<id>`): claim (a lease, see
// ./transcriptionJob.ts), progress, source description, audio, completion, failure and the
// settlement of a failed note's credits. It folds the note's own state (`evolveNote`).
import type { Decider } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { evolveNote, type NoteFailed, type NoteReady, type NoteEvent, type NoteState, type NoteTranscribed } from './note.ts'
import type { JobState, NoteSourceDescribed, TranscriptionCommand, TranscriptionJobEvent } from './transcriptionJob.ts'

const plus = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString()

type Existing = Extract<NoteState, { exists: true }>
type JobEvent = TranscriptionJobEvent | NoteTranscribed | NoteReady | NoteFailed

const lost = (why: string) => new DomainError('conflict', `This worker no longer holds the transcription job: ${why}.`)

function holder(note: Existing, c: { workerId: string; attempt: number }): JobState {
  const job = note.job
  if (!job || note.phase !== 'processing') throw lost(`the note is ${note.phase}`)
  if (job.attempt !== c.attempt || job.workerId !== c.workerId) throw lost(`attempt ${job.attempt} by ${job.workerId} took over`)
  return job
}

export function decideTranscription(c: TranscriptionCommand, note: Existing): JobEvent[] {
  switch (c.type) {
    case 'ClaimTranscription': {
      const job = note.job
      if (!job || (note.phase !== 'queued' && note.phase !== 'processing')) throw new DomainError('conflict', `The note is ${note.phase}: there is no job to claim.`)
      if (c.now < job.claimableAt) throw new DomainError('conflict', `The job is not claimable before ${job.claimableAt}.`)
      if (job.attempt - (job.handedBack ?? 0) >= c.terms.maxAttempts) {
        // Out of attempts: the claim turns into the failure, with the last error seen.
        const last = job.lastError ?? { errorCode: 'processing_timeout', message: `No attempt reported back within its lease (${job.attempt} attempts).` }
        return [{ type: 'NoteFailed', data: { errorCode: last.errorCode, message: last.message, at: c.now } }]
      }
      const attempt = job.attempt + 1
      const leaseExpiresAt = plus(c.now, c.terms.leaseMs)
      return [{ type: 'TranscriptionStarted', data: { jobId: job.jobId, workerId: c.workerId, attempt, leaseExpiresAt, retryAt: plus(leaseExpiresAt, c.terms.backoffMs(attempt)), at: c.now } }]
    }
    case 'ReportProgress': {
      const job = holder(note, c)
      const leaseExpiresAt = plus(c.now, c.terms.leaseMs)
      return [
        {
          type: 'TranscriptionProgressed',
          data: { jobId: job.jobId, attempt: c.attempt, stage: c.stage, percent: c.percent, leaseExpiresAt, retryAt: plus(leaseExpiresAt, c.terms.backoffMs(c.attempt)), at: c.now },
        },
      ]
    }
    case 'DescribeSource': {
      holder(note, c)
      const d: NoteSourceDescribed['data'] = { at: c.now }
      if (c.title !== undefined && c.title !== note.title) d.title = c.title
      if (c.description !== undefined && c.description !== note.description) d.description = c.description
      if (c.recordedAt !== undefined && c.recordedAt !== note.recordedAt) d.recordedAt = c.recordedAt
      if (c.durationSeconds !== undefined && c.durationSeconds !== note.durationSeconds) d.durationSeconds = c.durationSeconds
      return Object.keys(d).length > 1 ? [{ type: 'NoteSourceDescribed', data: d }] : []
    }
    case 'RecordAudio': {
      holder(note, c)
      if (note.audio?.blobKey === c.blobKey && note.audio.sizeBytes === c.sizeBytes) return []
      return [{ type: 'NoteAudioStored', data: { blobKey: c.blobKey, sizeBytes: c.sizeBytes, contentType: c.contentType, at: c.now } }]
    }
    case 'CompleteTranscription': {
      holder(note, c)
      return [
        { type: 'NoteTranscribed', data: { transcript: c.transcript, at: c.now } },
        { type: 'NoteReady', data: { durationSeconds: c.durationSeconds, language: c.language, ...(c.decodedSeconds != null ? { decodedSeconds: c.decodedSeconds } : {}), at: c.now } },
      ]
    }
    case 'FailTranscription': {
      const job = holder(note, c)
      if (c.retriable && c.attempt < c.terms.maxAttempts) {
        return [{ type: 'TranscriptionAttemptFailed', data: { jobId: job.jobId, attempt: c.attempt, errorCode: c.errorCode, message: c.message, retryAt: plus(c.now, c.terms.backoffMs(c.attempt)), at: c.now } }]
      }
      return [{ type: 'NoteFailed', data: { errorCode: c.errorCode, message: c.message, at: c.now } }]
    }
    case 'ReleaseTranscription': {
      const job = holder(note, c)
      return [{ type: 'TranscriptionReleased', data: { jobId: job.jobId, attempt: c.attempt, workerId: c.workerId, reason: c.reason, at: c.now } }]
    }
    case 'SettleTranscription': {
      if (note.phase !== 'failed' || !note.job || note.job.settled) return []
      return [{ type: 'TranscriptionSettled', data: { jobId: note.job.jobId, credits: c.credits, creditsReturned: c.creditsReturned, minutesReleased: c.minutesReleased, at: c.now } }]
    }
  }
}

export const transcriptionDecider: Decider<TranscriptionCommand, NoteEvent, NoteState> = {
  decide(c, s) {
    if (!s.exists) throw new DomainError('not_found', 'No such note.')
    return decideTranscription(c, s)
  },
  evolve: evolveNote,
  initialState: () => ({ exists: false }),
}
