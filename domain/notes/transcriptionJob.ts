// The transcription job of a note, kept on the note's own stream (`note-<id>`), so the job and
// the note can never disagree. A worker claims the job by appending `TranscriptionStarted` at the
// stream revision it read: two workers (or processes) racing for one job both read revision n,
// one append wins, the other gets a wrong-expected-revision conflict, re-reads and sees the job
// taken. The claim is a lease: it carries an expiry, renewed by progress events, and a `retryAt`
// (expiry plus backoff) after which another worker may claim the job again with the next
// attempt number. Every later event of an attempt names the attempt, so a worker whose lease
// was taken over can no longer write anything.
import type { DomainEvent } from '../decider.ts'

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
  source_url_invalid: { retriable: false, meaning: "a redirect's Location or a feed's enclosure is not a URL that can be followed" },
  source_too_large: { retriable: false, meaning: 'the file is larger than the plan allows' },
  duration_limit_exceeded: { retriable: false, meaning: 'the audio is longer than the plan allows; nothing was charged' },
  unsupported_media: { retriable: false, meaning: 'the bytes are not audio or video we can read (sniffed, not trusted from the name)' },
  no_audio: { retriable: false, meaning: 'the media has no audio track' },
  feed_invalid: { retriable: false, meaning: 'the podcast feed is not RSS we can read, or has no episode with audio' },
  episode_not_found: { retriable: false, meaning: 'the episode the link names is not in the feed' },
  directory_lookup_failed: { retriable: false, meaning: 'the podcast directory has no feed for that id' },
  videosite_unavailable: { retriable: false, meaning: 'video-site links need yt-dlp, which is not installed on this server' },
  videosite_failed: { retriable: false, meaning: 'yt-dlp could not fetch the video' },
  asr_model_missing: { retriable: false, meaning: 'the speech engine of this server has no model (it could not be fetched, or WHISPER_MODEL_PATH names nothing)' },
  asr_model_invalid: { retriable: false, meaning: 'the speech engine of this server could not load its model (WHISPER_MODEL_PATH is not a model file of that engine)' },
  asr_language_unsupported: { retriable: false, meaning: 'the note asks for a language the speech model cannot transcribe (an English-only model, or a language Whisper does not know)' },
  asr_failed: { retriable: true, meaning: 'the speech engine failed or did not answer' },
  no_speech: { retriable: false, meaning: 'the audio holds no speech (silence, noise or music only); its credits are refunded' },
  insufficient_credits: { retriable: false, meaning: 'the balance cannot cover 50 credits per started minute of this audio' },
  processing_timeout: { retriable: false, meaning: 'every attempt ended without the worker reporting back (lease expired)' },
  internal_error: { retriable: true, meaning: 'an unexpected error on our side' },
  upload_expired: { retriable: false, meaning: 'the file never arrived (it was not uploaded and finalized while the upload link was valid)' },
  unsupported_media_type: { retriable: false, meaning: 'the upload was refused: the file is not audio or video we can read' },
  file_too_large: { retriable: false, meaning: 'the upload was refused: the file is larger than the plan or the declared size allows' },
  quota_exceeded: { retriable: false, meaning: 'the month\'s upload minutes were used up: a finalize refused the upload, or the audio holds more minutes than its file said and the month has no room for them' },
  invalid_request: { retriable: false, meaning: 'the upload was refused: the file is not the size declared' },
} as const satisfies Record<string, { retriable: boolean; meaning: string }>
export type NoteErrorCode = keyof typeof NOTE_ERROR_CODES

/**
 * Whose move it is after a failure: the source (another link or file helps), the audio itself
 * (nothing to transcribe), the account (credits), the request (its language), or the server
 * (its operator must act: importing again changes nothing until then).
 */
export type FailureFault = 'source' | 'audio' | 'account' | 'request' | 'server'
const FAULTS: Record<NoteErrorCode, FailureFault> = {
  download_failed: 'source',
  source_not_found: 'source',
  source_blocked: 'source',
  source_url_invalid: 'source',
  source_too_large: 'source',
  unsupported_media: 'source',
  no_audio: 'audio',
  feed_invalid: 'source',
  episode_not_found: 'source',
  directory_lookup_failed: 'source',
  videosite_unavailable: 'server',
  videosite_failed: 'source',
  asr_model_missing: 'server',
  asr_model_invalid: 'server',
  asr_language_unsupported: 'request',
  asr_failed: 'server',
  no_speech: 'audio',
  insufficient_credits: 'account',
  processing_timeout: 'server',
  internal_error: 'server',
  // The plan's limit: a plan with longer audio, or a shorter file.
  duration_limit_exceeded: 'account',
  // An upload never completed, or refused: uploading the file again is the next move.
  upload_expired: 'source',
  unsupported_media_type: 'source',
  file_too_large: 'source',
  invalid_request: 'source',
  quota_exceeded: 'account',
}
export const faultOf = (errorCode: string | null): FailureFault => (errorCode && errorCode in FAULTS ? FAULTS[errorCode as NoteErrorCode] : 'server')

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
  /** Attempts handed back by a stopping worker: they do not count against the attempt limit. */
  handedBack?: number
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

/**
 * A worker that stops (SIGTERM, a deploy) hands its attempt back instead of letting the lease run
 * out: the job is claimable at once, by any worker, and the attempt does not count.
 */
export type TranscriptionReleased = DomainEvent<'TranscriptionReleased', { jobId: string; attempt: number; workerId: string; reason: string; at: string }>

export type TranscriptionJobEvent =
  | TranscriptionStarted
  | TranscriptionProgressed
  | TranscriptionAttemptFailed
  | TranscriptionReleased
  | NoteSourceDescribed
  | NoteAudioStored
  | TranscriptionSettled
export const TRANSCRIPTION_JOB_EVENT_TYPES: readonly TranscriptionJobEvent['type'][] = [
  'TranscriptionStarted',
  'TranscriptionProgressed',
  'TranscriptionAttemptFailed',
  'TranscriptionReleased',
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

export type TranscriptionCommand =
  | { type: 'ClaimTranscription'; workerId: string; terms: LeaseTerms; now: string }
  | { type: 'ReportProgress'; workerId: string; attempt: number; stage: PipelineStage; percent: number | null; terms: LeaseTerms; now: string }
  | { type: 'DescribeSource'; workerId: string; attempt: number; title?: string; description?: string | null; recordedAt?: string | null; durationSeconds?: number | null; now: string }
  | { type: 'RecordAudio'; workerId: string; attempt: number; blobKey: string; sizeBytes: number; contentType: string; now: string }
  | { type: 'CompleteTranscription'; workerId: string; attempt: number; transcript: import('./transcript.ts').Transcript; durationSeconds: number | null; language: string | null; decodedSeconds?: number | null; now: string }
  | { type: 'FailTranscription'; workerId: string; attempt: number; errorCode: string; message: string; retriable: boolean; terms: LeaseTerms; now: string }
  | { type: 'ReleaseTranscription'; workerId: string; attempt: number; reason: string; now: string }
  | { type: 'SettleTranscription'; credits: TranscriptionSettled['data']['credits']; creditsReturned: number; minutesReleased: boolean; now: string }

/** Exponential backoff with a cap: base, 2×base, 4×base, ... (jitter is added by the caller). */
export const exponentialBackoff =
  (baseMs: number, capMs: number) =>
  (attempt: number): number =>
    Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1))

export const initialJob = (jobId: string, at: string): JobState => ({
  jobId,
  attempt: 0,
  workerId: null,
  running: false,
  leaseExpiresAt: null,
  claimableAt: at,
  lastError: null,
  settled: false,
  handedBack: 0,
})
