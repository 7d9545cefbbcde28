// The job queue read model, `transcription_jobs`: one document per note with work to do (a job
// to claim, or a failed note whose credits are not settled yet) and the instant it becomes
// due. Workers read it to find candidates cheaply; it is only a hint: the claim itself is decided
// on the note stream at its expected revision, so a stale document can never cause double work.
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import type { Projection } from './runner.ts'
import { applyBatched } from './batchedDocuments.ts'
import { noteStream } from '../domain/notes/note.ts'
import { causedBy } from '../ports/tracing.ts'

export const TRANSCRIPTION_JOBS = 'transcription_jobs'

export interface TranscriptionJobDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  jobId: string
  /** queued: waiting for a (new) attempt; running: leased; settling: failed, credits to give back. */
  status: 'queued' | 'running' | 'settling'
  attempt: number
  /** ISO 8601: when a worker may act on it (claim, reclaim after the lease plus backoff, settle). */
  dueAt: string
  revision: number
  /** The event that queued the job, its correlation and trace: the worker's work continues them. */
  cause?: { correlationId: string; causationId: string; traceparent?: string; tracestate?: string }
}

const causeOf = (recorded: RecordedEvent): NonNullable<TranscriptionJobDoc['cause']> => {
  const c = causedBy(recorded)
  return { correlationId: c.correlationId, causationId: c.causationId, ...(c.trace ?? {}) }
}

export const transcriptionJobsProjection: Projection = {
  name: 'transcription-jobs',
  filter: { categories: ['note'] },
  collections: [TRANSCRIPTION_JOBS],
  async setup(docs) {
    await docs.collection(TRANSCRIPTION_JOBS).createIndex({ keys: { dueAt: 1, _id: 1 }, name: 'by_due' })
  },
  async handle(events, docs) {
    // One read of the jobs the batch touches and one guarded write of those it changed
    // (projections/batchedDocuments.ts); the note events a job ignores (edits, uploads,
    // transcripts) are skipped before any read.
    await applyBatched(docs.collection<TranscriptionJobDoc>(TRANSCRIPTION_JOBS), events, {
      idOf: (e) => (JOB_EVENTS.has(e.type) && !isUploadCreate(e) ? noteStream.idOf(e.streamName) : null),
      created: (e) => (e.type === 'NoteCreated' ? evolveJob(null, e) : null),
      evolve: async (doc, e) => evolveJob(doc, e),
    })
  },
}

/** An upload's create has no job yet (it starts at finalize). */
const isUploadCreate = (e: RecordedEvent) => e.type === 'NoteCreated' && !toDomainEvent<Extract<NoteEvent, { type: 'NoteCreated' }>>(e).data.jobId

/** The note events that move a transcription job. */
const JOB_EVENTS = new Set([
  'NoteDeleted',
  'NoteCreated',
  'NoteFinalized',
  'TranscriptionStarted',
  'TranscriptionProgressed',
  'TranscriptionAttemptFailed',
  'TranscriptionReleased',
  'NoteFailed',
  'NoteReady',
  'TranscriptionSettled',
])

/** A job waiting for its first attempt: queued by a link's create, or by an upload's finalize. */
function queuedJob(recorded: RecordedEvent, accountId: string, read: TranscriptionJobDoc | null): TranscriptionJobDoc {
  const e = toDomainEvent<Extract<NoteEvent, { type: 'NoteCreated' | 'NoteFinalized' }>>(recorded)
  const jobId = e.data.jobId ?? read?.jobId ?? ''
  return { _id: noteStream.idOf(recorded.streamName), accountId, jobId, status: 'queued', attempt: 0, dueAt: e.data.at, revision: recorded.revision, cause: causeOf(recorded) }
}

/**
 * The job after `recorded`. Deleted documents leave no revision behind; a finished job never
 * comes back, so re-applying an old event of it would only re-create what a later event removed:
 * the guard is the revision stored on the document, and the write is guarded by the revision
 * read (a late instance cannot put a job back to an older state).
 */
function evolveJob(doc: TranscriptionJobDoc | null, recorded: RecordedEvent): TranscriptionJobDoc | null {
  if (doc && doc.revision >= recorded.revision) return doc
  const e = toDomainEvent<NoteEvent>(recorded)
  const set = (fields: Partial<TranscriptionJobDoc>): TranscriptionJobDoc | null => (doc ? { ...doc, ...fields, revision: recorded.revision } : null)
  switch (e.type) {
    case 'NoteDeleted':
    case 'NoteReady':
    case 'TranscriptionSettled':
      return null
    case 'NoteCreated':
      return e.data.jobId ? queuedJob(recorded, e.data.accountId, doc) : doc
    case 'NoteFinalized':
      return queuedJob(recorded, String((recorded.metadata as { accountId?: string }).accountId ?? doc?.accountId ?? ''), doc)
    case 'TranscriptionStarted':
      return set({ status: 'running', attempt: e.data.attempt, dueAt: e.data.retryAt })
    case 'TranscriptionProgressed':
      return set({ dueAt: e.data.retryAt })
    case 'TranscriptionAttemptFailed':
      return set({ status: 'queued', dueAt: e.data.retryAt })
    case 'TranscriptionReleased':
      return set({ status: 'queued', dueAt: e.data.at })
    case 'NoteFailed':
      return set({ status: 'settling', dueAt: e.data.at })
    default:
      return doc
  }
}
