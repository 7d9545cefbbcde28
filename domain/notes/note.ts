// A note, stream `note-<noteId>`: from its creation (an import link or an upload slot) through
// the upload, the transcription and the user's edits. The transcription pipeline adds its own
// events to the same stream, so the note's whole life is one ordered history.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import type { Transcript } from './transcript.ts'
import { initialJob, type JobState, type TranscriptionJobEvent, TRANSCRIPTION_JOB_EVENT_TYPES } from './transcriptionJob.ts'
import { streamKind } from '../streams.ts'

export const noteStream = streamKind('note')

export const NOTE_STATUSES = ['processing', 'ready', 'failed'] as const
export type NoteStatus = (typeof NOTE_STATUSES)[number]
export const ORIGINS = ['videosite', 'podcast', 'link', 'video', 'audio', 'recording'] as const
export type Origin = (typeof ORIGINS)[number]
export const PROVIDERS = ['videosite', 'podcast-directory', 'podcast-rss', 'direct'] as const
export type Provider = (typeof PROVIDERS)[number]
export type SourceType = 'upload' | 'recording' | 'url'

/**
 * Finer than the public `status`: `awaiting_upload` and `queued` are both `processing` to a
 * client, but finalize must tell them apart.
 */
export type Phase = 'awaiting_upload' | 'queued' | 'processing' | 'ready' | 'failed'
export const statusOf = (phase: Phase): NoteStatus => (phase === 'ready' ? 'ready' : phase === 'failed' ? 'failed' : 'processing')

export type UploadSlot = {
  filename: string
  contentType: string
  declaredBytes: number | null
}

export type ReceivedUpload = {
  blobKey: string
  sizeBytes: number
  contentType: string
  sha256: string
  durationSeconds: number
}

// ---- events ---------------------------------------------------------------------------------

export type NoteCreated = DomainEvent<
  'NoteCreated',
  {
    noteId: string
    accountId: string
    sourceType: SourceType
    origin: Origin
    provider: Provider | null
    sourceUrl: string | null
    title: string
    language: string | null
    /** How many people speak, when the user said (older events have none). */
    speakers?: number | null
    keepAudio: boolean
    upload: UploadSlot | null
    /** Work queued at creation (imports); uploads get theirs at finalize. */
    jobId: string | null
    /** Credits held for an import until its duration is known. */
    reservationId: string | null
    at: string
  }
>
export type NoteUploadReceived = DomainEvent<'NoteUploadReceived', ReceivedUpload & { at: string }>
export type NoteFinalized = DomainEvent<'NoteFinalized', { jobId: string; title: string | null; minutes: number; at: string }>
export type NoteEdited = DomainEvent<
  'NoteEdited',
  { title?: string; description?: string | null; folderId?: string | null; tags?: string[]; keepAudio?: boolean; at: string }
>
/** The note's audio was deleted at the end of the retention window (the transcript stays). */
export type NoteAudioDeleted = DomainEvent<'NoteAudioDeleted', { blobKey: string; reason: string; at: string }>
export type NoteTranscribed = DomainEvent<'NoteTranscribed', { transcript: Transcript; at: string }>
/** `decodedSeconds`: the length of the decoded audio (its sample count), which the import was priced by; absent for a published transcript. */
export type NoteReady = DomainEvent<'NoteReady', { durationSeconds: number | null; language: string | null; decodedSeconds?: number; at: string }>
export type NoteFailed = DomainEvent<'NoteFailed', { errorCode: string; message: string; at: string }>
/**
 * The owner deleted the note. Carries no content: it stays readable after the note's content key
 * is destroyed (crypto-shredding, adapters/crypto/shreddingEventStore.ts), so every fold of the
 * stream ends with "no such note" and every projection drops what it kept of the note.
 */
export type NoteDeleted = DomainEvent<'NoteDeleted', { accountId: string; at: string }>
/** A finalize refused the uploaded bytes (415, 413, 402...): the note still waits, and fails with this code if it expires. */
export type NoteUploadRefused = DomainEvent<'NoteUploadRefused', { errorCode: string; message: string; at: string }>

export type NoteEvent =
  | NoteCreated
  | NoteUploadReceived
  | NoteUploadRefused
  | NoteFinalized
  | NoteEdited
  | NoteTranscribed
  | NoteReady
  | NoteFailed
  | NoteAudioDeleted
  | NoteDeleted
  | TranscriptionJobEvent

export const NOTE_EVENT_TYPES: readonly NoteEvent['type'][] = [
  'NoteCreated',
  'NoteUploadReceived',
  'NoteUploadRefused',
  'NoteFinalized',
  'NoteEdited',
  'NoteTranscribed',
  'NoteReady',
  'NoteFailed',
  'NoteAudioDeleted',
  'NoteDeleted',
  ...TRANSCRIPTION_JOB_EVENT_TYPES,
]

// ---- commands -------------------------------------------------------------------------------

export type CreateNote = Omit<NoteCreated['data'], 'at'> & { type: 'CreateNote'; now: string }
export type NoteCommand =
  | CreateNote
  | ({ type: 'RecordUpload'; accountId: string; now: string } & ReceivedUpload)
  /** `blobKey`: the recorded upload the minutes were priced for; another one recorded meanwhile refuses it. */
  | { type: 'FinalizeUpload'; accountId: string; jobId: string; title: string | null; minutes: number; blobKey: string | null; now: string }
  | { type: 'EditNote'; accountId: string; changes: Omit<NoteEdited['data'], 'at'>; now: string }
  /** DELETE /v1/notes/{id}: the note ends; its content is shredded by the command. */
  | { type: 'DeleteNote'; accountId: string; now: string }
  /** Records why a finalize refused the uploaded bytes; only while the note waits for an upload. */
  | { type: 'RefuseUpload'; accountId: string; errorCode: string; message: string; now: string }
  /**
   * Fails a note still waiting for its upload when it was created before `createdBefore` (the
   * upload URL has expired): with the last refusal's code, or `upload_expired`.
   */
  | { type: 'ExpireUpload'; accountId: string; createdBefore: string; now: string }
  /** Deletes the note's audio when it was stored before `cutoff` and the owner did not ask to keep it. */
  | { type: 'ExpireAudio'; accountId: string; cutoff: string; now: string }

// ---- state ----------------------------------------------------------------------------------

export type NoteState =
  | { exists: false }
  | {
      exists: true
      noteId: string
      accountId: string
      phase: Phase
      sourceType: SourceType
      origin: Origin
      provider: Provider | null
      sourceUrl: string | null
      title: string
      description: string | null
      language: string | null
      /** The user's speaker-count hint for the diarizer, or null. */
      speakers: number | null
      keepAudio: boolean
      folderId: string | null
      tags: string[]
      upload: UploadSlot | null
      received: ReceivedUpload | null
      /** The last finalize refusal while waiting for the upload. */
      uploadRefusal: { errorCode: string; message: string } | null
      /** An import's kept media (uploads keep theirs in `received`). */
      audio: { blobKey: string; sizeBytes: number; contentType: string } | null
      /** When the audio (upload or kept media) was stored, and when the retention window deleted it. */
      audioStoredAt: string | null
      audioDeletedAt: string | null
      jobId: string | null
      reservationId: string | null
      errorCode: string | null
      durationSeconds: number | null
      recordedAt: string | null
      /** The transcription job (imports from creation, uploads from finalize); see ./transcriptionJob.ts. */
      job: JobState | null
      createdAt: string
      updatedAt: string
    }

type Existing = Extract<NoteState, { exists: true }>

export function evolveNote(s: NoteState, e: NoteEvent): NoteState {
  if (e.type === 'NoteDeleted') return { exists: false }
  if (e.type === 'NoteCreated') {
    const d = e.data
    return {
      exists: true,
      noteId: d.noteId,
      accountId: d.accountId,
      phase: d.upload ? 'awaiting_upload' : 'queued',
      sourceType: d.sourceType,
      origin: d.origin,
      provider: d.provider,
      sourceUrl: d.sourceUrl,
      title: d.title,
      description: null,
      language: d.language,
      speakers: d.speakers ?? null,
      keepAudio: d.keepAudio,
      folderId: null,
      tags: [],
      upload: d.upload,
      received: null,
      uploadRefusal: null,
      audio: null,
      audioStoredAt: null,
      audioDeletedAt: null,
      jobId: d.jobId,
      reservationId: d.reservationId,
      errorCode: null,
      durationSeconds: null,
      recordedAt: null,
      job: d.jobId ? initialJob(d.jobId, d.at) : null,
      createdAt: d.at,
      updatedAt: d.at,
    }
  }
  if (!s.exists) return s
  const touched = { ...s, updatedAt: e.data.at }
  switch (e.type) {
    case 'NoteUploadReceived': {
      const { at: _, ...received } = e.data
      return { ...touched, received, durationSeconds: received.durationSeconds, audioStoredAt: e.data.at }
    }
    case 'NoteUploadRefused':
      return { ...touched, uploadRefusal: { errorCode: e.data.errorCode, message: e.data.message } }
    case 'NoteFinalized':
      return { ...touched, phase: 'queued', jobId: e.data.jobId, title: e.data.title ?? s.title, job: initialJob(e.data.jobId, e.data.at) }
    case 'NoteEdited': {
      const { at: _, ...changes } = e.data
      return { ...touched, ...changes }
    }
    case 'NoteTranscribed':
      return touched
    case 'NoteReady':
      return { ...touched, phase: 'ready', durationSeconds: e.data.durationSeconds ?? s.durationSeconds, language: e.data.language ?? s.language }
    case 'NoteFailed':
      return { ...touched, phase: 'failed', errorCode: e.data.errorCode, job: s.job ? { ...s.job, running: false } : null }
    case 'NoteAudioDeleted':
      return { ...touched, audioDeletedAt: e.data.at }
    default:
      // The transcription job's events (./transcriptionJob.ts); events of other deciders on this stream
      // leave the note as it is (evolveTranscriptionJob returns the state unchanged for them).
      return evolveTranscriptionJob(s, e)
  }
}

/** How the transcription job's events change the note's state (./transcriptionJob.ts). */
export function evolveTranscriptionJob(s: Existing, e: TranscriptionJobEvent): Existing {
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
    case 'TranscriptionReleased':
      return {
        ...touched,
        phase: 'queued',
        job: { ...job, running: false, workerId: null, leaseExpiresAt: null, claimableAt: e.data.at, handedBack: (job.handedBack ?? 0) + 1 },
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

/** Where the note's audio is: the upload's bytes or an import's kept media; null once deleted or when none was kept. */
export const audioBlobOf = (note: Existing): string | null => (note.audioDeletedAt ? null : (note.audio?.blobKey ?? note.received?.blobKey ?? null))

/** Someone else's note and a missing note are the same answer (spec: never reveal which). */
export function ownedNote(s: NoteState, accountId: string): Existing {
  if (!s.exists || s.accountId !== accountId) throw new DomainError('not_found', 'No note with that id belongs to you.')
  return s
}

export function decideNote(c: NoteCommand, s: NoteState): NoteEvent[] {
  if (c.type === 'CreateNote') {
    const { type: _, now, ...data } = c
    // The same id again is a retried request (same Idempotency-Key): nothing new happens.
    if (s.exists) {
      if (s.accountId !== c.accountId) throw new DomainError('conflict', 'This note id is taken.')
      return []
    }
    return [{ type: 'NoteCreated', data: { ...data, at: now } }]
  }
  const note = ownedNote(s, c.accountId)
  switch (c.type) {
    case 'RecordUpload': {
      if (note.phase !== 'awaiting_upload') {
        throw new DomainError('invalid_state', 'This note is not waiting for an upload any more.', { current: statusOf(note.phase) })
      }
      const { type: _, accountId: _a, now, ...received } = c
      return [{ type: 'NoteUploadReceived', data: { ...received, at: now } }]
    }
    case 'FinalizeUpload': {
      if (note.phase !== 'awaiting_upload') {
        throw new DomainError('invalid_state', 'This note is not waiting for an upload.', { current: statusOf(note.phase) })
      }
      if (!note.received) {
        throw new DomainError('invalid_state', 'No bytes have been uploaded for this note yet: PUT the file to upload.url, then finalize.', {
          current: 'awaiting_upload',
        })
      }
      if (c.blobKey !== null && c.blobKey !== note.received.blobKey) {
        throw new DomainError('conflict', 'Another finalize checked newer bytes for this note meanwhile; finalize again.')
      }
      return [{ type: 'NoteFinalized', data: { jobId: c.jobId, title: c.title, minutes: c.minutes, at: c.now } }]
    }
    case 'EditNote': {
      const changes: Omit<NoteEdited['data'], 'at'> = {}
      const ch = c.changes
      if (ch.title !== undefined && ch.title !== note.title) changes.title = ch.title
      if (ch.description !== undefined && ch.description !== note.description) changes.description = ch.description
      if (ch.folderId !== undefined && ch.folderId !== note.folderId) changes.folderId = ch.folderId
      if (ch.tags !== undefined && JSON.stringify(ch.tags) !== JSON.stringify(note.tags)) changes.tags = ch.tags
      if (ch.keepAudio !== undefined && ch.keepAudio !== note.keepAudio) {
        if (ch.keepAudio && note.audioDeletedAt) throw new DomainError('audio_unavailable', 'The audio of this note was already deleted at the end of its retention window.')
        changes.keepAudio = ch.keepAudio
      }
      if (Object.keys(changes).length === 0) return []
      return [{ type: 'NoteEdited', data: { ...changes, at: c.now } }]
    }
    case 'DeleteNote':
      return [{ type: 'NoteDeleted', data: { accountId: note.accountId, at: c.now } }]
    case 'RefuseUpload':
      if (note.phase !== 'awaiting_upload') return []
      return [{ type: 'NoteUploadRefused', data: { errorCode: c.errorCode, message: c.message, at: c.now } }]
    case 'ExpireUpload': {
      if (note.phase !== 'awaiting_upload' || note.createdAt >= c.createdBefore) return []
      const refusal = note.uploadRefusal
      const message = refusal
        ? `The upload URL expired after the last finalize was refused (${refusal.errorCode}): ${refusal.message}`
        : note.received
          ? 'The upload URL expired before the note was finalized: POST /v1/notes/{id}/finalize was never called.'
          : 'The upload URL expired before any bytes were uploaded (PUT) and finalized.'
      return [{ type: 'NoteFailed', data: { errorCode: refusal?.errorCode ?? 'upload_expired', message, at: c.now } }]
    }
    case 'ExpireAudio': {
      const blobKey = audioBlobOf(note)
      if (!blobKey || note.keepAudio || !note.audioStoredAt || note.audioStoredAt >= c.cutoff) return []
      return [{ type: 'NoteAudioDeleted', data: { blobKey, reason: `retention window ended (stored ${note.audioStoredAt})`, at: c.now } }]
    }
  }
}

export const noteDecider: Decider<NoteCommand, NoteEvent, NoteState> = {
  decide: decideNote,
  evolve: evolveNote,
  initialState: () => ({ exists: false }),
}
