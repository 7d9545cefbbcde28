// The transcription job of a note, kept on the note's own stream (`note-<id>`), so the job and
// the note can never disagree. A worker claims the job by appending `TranscriptionStarted` at the
// stream revision it read: two workers (or processes) racing for one job both read revision n,
// one append wins, the other gets a wrong-expected-revision conflict, re-reads and sees the job
// taken. The claim is a lease: it carries an expiry, renewed by progress events, and a `retryAt`
// (expiry plus backoff) after which another worker may claim the job again with the next
// attempt number. Every later event of an attempt names the attempt, so a worker whose lease
// was taken over can no longer write anything.
import { DomainError } from '../errors.ts'
import type { DomainEvent } from '../decider.ts'
import type { NoteState } from './note.ts'

export const PIPELINE_STAGES = ['downloading', 'decoding', 'transcribing', 'diarizing', 'indexing'] as const
export type PipelineStage = (typeof PIPELINE_STAGES)[number]

/**
 * Why a note failed (`errorCode`). The spec leaves the values open; these are ours, listed in the
 * README. `retriable` ones are tried again (with backoff) until the attempt limit.
 */
export const NOTE_ERROR_CODES = {
  download_failed: { retriable: true, meaning: 'the source could not be downloaded (network error, timeout, server error)' },
  source_not_found: { retriable: false, meaning: 'the link answered 404/410 or similar: nothing to import' },
  source_blocked: { retriable: false, meaning: 'the link (or a redirect) leads to a non-public address' },
  source_too_large: { retriable: false, meaning: 'the file is larger than the plan allows' },
  unsupported_media: { retriable: false, meaning: 'the bytes are not audio or video we can read (sniffed, not trusted from the name)' },
  no_audio: { retriable: false, meaning: 'the media has no audio track' },
  feed_invalid: { retriable: false, meaning: 'the podcast feed is not RSS we can read, or has no episode with audio' },
  episode_not_found: { retriable: false, meaning: 'the episode the link names is not in the feed' },
  directory_lookup_failed: { retriable: false, meaning: 'the podcast directory has no feed for that id' },
  videosite_unavailable: { retriable: false, meaning: 'video-site links need yt-dlp, which is not installed on this server' },
  videosite_failed: { retriable: false, meaning: 'yt-dlp could not fetch the video' },
  asr_model_missing: { retriable: false, meaning: 'the local speech engine has no model file (WHISPER_MODEL_PATH)' },
  asr_model_invalid: { retriable: false, meaning: 'WHISPER_MODEL_PATH is not a whisper.cpp (ggml) model file' },
  asr_failed: { retriable: true, meaning: 'the speech engine failed or did not answer' },
  no_speech: { retriable: false, meaning: 'the audio holds no speech (silence, noise or music only); its credits are refunded' },
  insufficient_credits: { retriable: false, meaning: 'the balance cannot cover 50 credits per started minute of this audio' },
  processing_timeout: { retriable: false, meaning: 'every attempt ended without the worker reporting back (lease expired)' },
  internal_error: { retriable: true, meaning: 'an unexpected error on our side' },
} as const satisfies Record<string, { retriable: boolean; meaning: string }>
export type NoteErrorCode = keyof typeof NOTE_ERROR_CODES

export interface JobState {
  jobId: string
  /** Attempts started so far (the current one while running). */
  attempt: number
  workerId: string | null
  running: boolean
  leaseExpiresAt: string | null
  /** Nobody may claim before this instant (a running lease plus backoff, or a failed attempt's backoff). */
  claimableAt: string
  lastError: { errorCode: string; message: string } | null
  /** Credits and minutes of a failed note were given back. */
  settled: boolean
}

// ---- events ---------------------------------------------------------------------------------

export type TranscriptionStarted = DomainEvent<
  'TranscriptionStarted',
  { jobId: string; workerId: string; attempt: number; leaseExpiresAt: string; retryAt: string; at: string }
>
export type TranscriptionProgressed = DomainEvent<
  'TranscriptionProgressed',
  { jobId: string; attempt: number; stage: PipelineStage; percent: number | null; leaseExpiresAt: string; retryAt: string; at: string }
>
export type TranscriptionAttemptFailed = DomainEvent<
  'TranscriptionAttemptFailed',
  { jobId: string; attempt: number; errorCode: string; message: string; retryAt: string; at: string }
>
/** What the source says about itself (podcast item, video page): lands in the note's fields. */
export type NoteSourceDescribed = DomainEvent<
  'NoteSourceDescribed',
  { title?: string; description?: string | null; recordedAt?: string | null; durationSeconds?: number | null; at: string }
>
/** The downloaded media of an import, kept in the blob store (clips, the dashboard's player). */
export type NoteAudioStored = DomainEvent<'NoteAudioStored', { blobKey: string; sizeBytes: number; contentType: string; at: string }>
export type TranscriptionSettled = DomainEvent<
  'TranscriptionSettled',
  { jobId: string; credits: 'released' | 'refunded' | 'none'; creditsReturned: number; minutesReleased: boolean; at: string }
>

export type PipelineEvent = TranscriptionStarted | TranscriptionProgressed | TranscriptionAttemptFailed | NoteSourceDescribed | NoteAudioStored | TranscriptionSettled
export const PIPELINE_EVENT_TYPES: readonly PipelineEvent['type'][] = [
  'TranscriptionStarted',
  'TranscriptionProgressed',
  'TranscriptionAttemptFailed',
  'NoteSourceDescribed',
  'NoteAudioStored',
  'TranscriptionSettled',
]

// ---- commands -------------------------------------------------------------------------------

export interface LeaseTerms {
  leaseMs: number
  /** Delay after a lost lease or a failed attempt before the next attempt, by attempt number. */
  backoffMs: (attempt: number) => number
  maxAttempts: number
}

export type PipelineCommand =
  | { type: 'ClaimTranscription'; workerId: string; terms: LeaseTerms; now: string }
  | { type: 'ReportProgress'; workerId: string; attempt: number; stage: PipelineStage; percent: number | null; terms: LeaseTerms; now: string }
  | { type: 'DescribeSource'; workerId: string; attempt: number; title?: string; description?: string | null; recordedAt?: string | null; durationSeconds?: number | null; now: string }
  | { type: 'RecordAudio'; workerId: string; attempt: number; blobKey: string; sizeBytes: number; contentType: string; now: string }
  | { type: 'CompleteTranscription'; workerId: string; attempt: number; transcript: import('./transcript.ts').Transcript; durationSeconds: number | null; language: string | null; now: string }
  | { type: 'FailTranscription'; workerId: string; attempt: number; errorCode: string; message: string; retriable: boolean; terms: LeaseTerms; now: string }
  | { type: 'SettleTranscription'; credits: TranscriptionSettled['data']['credits']; creditsReturned: number; minutesReleased: boolean; now: string }

/** Exponential backoff with a cap: base, 2×base, 4×base, ... (jitter is added by the caller). */
export const exponentialBackoff =
  (baseMs: number, capMs: number) =>
  (attempt: number): number =>
    Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1))

const plus = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString()

export const initialJob = (jobId: string, at: string): JobState => ({
  jobId,
  attempt: 0,
  workerId: null,
  running: false,
  leaseExpiresAt: null,
  claimableAt: at,
  lastError: null,
  settled: false,
})

type Existing = Extract<NoteState, { exists: true }>
type JobEvent = PipelineEvent | import('./note.ts').NoteTranscribed | import('./note.ts').NoteReady | import('./note.ts').NoteFailed

const lost = (why: string) => new DomainError('conflict', `This worker no longer holds the transcription job: ${why}.`)

function holder(note: Existing, c: { workerId: string; attempt: number }): JobState {
  const job = note.job
  if (!job || note.phase !== 'processing') throw lost(`the note is ${note.phase}`)
  if (job.attempt !== c.attempt || job.workerId !== c.workerId) throw lost(`attempt ${job.attempt} by ${job.workerId} took over`)
  return job
}

export function decidePipeline(c: PipelineCommand, note: Existing): JobEvent[] {
  switch (c.type) {
    case 'ClaimTranscription': {
      const job = note.job
      if (!job || (note.phase !== 'queued' && note.phase !== 'processing')) throw new DomainError('conflict', `The note is ${note.phase}: there is no job to claim.`)
      if (c.now < job.claimableAt) throw new DomainError('conflict', `The job is not claimable before ${job.claimableAt}.`)
      if (job.attempt >= c.terms.maxAttempts) {
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
        { type: 'NoteReady', data: { durationSeconds: c.durationSeconds, language: c.language, at: c.now } },
      ]
    }
    case 'FailTranscription': {
      const job = holder(note, c)
      if (c.retriable && c.attempt < c.terms.maxAttempts) {
        return [{ type: 'TranscriptionAttemptFailed', data: { jobId: job.jobId, attempt: c.attempt, errorCode: c.errorCode, message: c.message, retryAt: plus(c.now, c.terms.backoffMs(c.attempt)), at: c.now } }]
      }
      return [{ type: 'NoteFailed', data: { errorCode: c.errorCode, message: c.message, at: c.now } }]
    }
    case 'SettleTranscription': {
      if (note.phase !== 'failed' || !note.job || note.job.settled) return []
      return [{ type: 'TranscriptionSettled', data: { jobId: note.job.jobId, credits: c.credits, creditsReturned: c.creditsReturned, minutesReleased: c.minutesReleased, at: c.now } }]
    }
  }
}

/** How the pipeline events change the note's state (called from the note's `evolve`). */
export function evolvePipeline(s: Existing, e: PipelineEvent): Existing {
  const touched = { ...s, updatedAt: e.data.at }
  const job = s.job ?? initialJob(s.jobId ?? '', s.createdAt)
  switch (e.type) {
    case 'TranscriptionStarted':
      return {
        ...touched,
        phase: 'processing',
        job: { ...job, attempt: e.data.attempt, workerId: e.data.workerId, running: true, leaseExpiresAt: e.data.leaseExpiresAt, claimableAt: e.data.retryAt },
      }
    case 'TranscriptionProgressed':
      return { ...touched, job: { ...job, leaseExpiresAt: e.data.leaseExpiresAt, claimableAt: e.data.retryAt } }
    case 'TranscriptionAttemptFailed':
      return {
        ...touched,
        phase: 'queued',
        job: { ...job, running: false, workerId: null, leaseExpiresAt: null, claimableAt: e.data.retryAt, lastError: { errorCode: e.data.errorCode, message: e.data.message } },
      }
    case 'NoteSourceDescribed': {
      const { at: _, durationSeconds, ...rest } = e.data
      return { ...touched, ...rest, ...(durationSeconds !== undefined ? { durationSeconds } : {}) }
    }
    case 'NoteAudioStored': {
      const { at, ...audio } = e.data
      return { ...touched, audio, audioStoredAt: at }
    }
    case 'TranscriptionSettled':
      return { ...touched, job: { ...job, settled: true } }
    default:
      // Events of other deciders on the note stream (transcript edits, speakers...) leave the job as it is.
      return s
  }
}
