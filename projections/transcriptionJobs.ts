// The job queue read model, `transcription_jobs`: one document per note with work to do (a job
// to claim, or a failed note whose credits are not settled yet) and the instant it becomes
// due. Workers read it to find candidates cheaply; it is only a hint: the claim itself is decided
// on the note stream at its expected revision, so a stale document can never cause double work.
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import type { Projection } from './runner.ts'
import { replaceRead, updateRead } from './revisionGuard.ts'
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
    // The note events a job ignores (edits, uploads, transcripts) are skipped before any read.
    for (const e of events) if (JOB_EVENTS.has(e.type)) await apply(e, docs)
  },
}

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

async function apply(recorded: RecordedEvent, docs: DocumentStore) {
  const jobs = docs.collection<TranscriptionJobDoc>(TRANSCRIPTION_JOBS)
  const noteId = noteStream.idOf(recorded.streamName)
  const e = toDomainEvent<NoteEvent>(recorded)
  if (e.type === 'NoteDeleted') {
    await jobs.deleteOne({ _id: noteId })
    return
  }
  // An upload's create has no job yet (it starts at finalize): nothing to read or write.
  if (e.type === 'NoteCreated' && !e.data.jobId) return
  const doc = await jobs.findOne({ _id: noteId })
  // Deleted documents leave no revision behind; a finished job never comes back, so re-applying
  // an old event of it would only re-create what a later event removed: the guard is the
  // revision stored on the document, and events before a terminal one are harmless to skip.
  if (doc && doc.revision >= recorded.revision) return
  // Every write carries the revision read in its filter (projections/revisionGuard.ts): a late
  // instance cannot put a job back to an older state.
  const set = (fields: Partial<TranscriptionJobDoc>) => updateRead(jobs, doc!, { $set: { ...fields, revision: recorded.revision } })
  switch (e.type) {
    case 'NoteCreated':
      if (e.data.jobId) {
        await replaceRead(jobs, doc, { _id: noteId, accountId: e.data.accountId, jobId: e.data.jobId, status: 'queued', attempt: 0, dueAt: e.data.at, revision: recorded.revision, cause: causeOf(recorded) })
      }
      return
    case 'NoteFinalized': {
      const accountId = String((recorded.metadata as { accountId?: string }).accountId ?? doc?.accountId ?? '')
      await replaceRead(jobs, doc, { _id: noteId, accountId, jobId: e.data.jobId, status: 'queued', attempt: 0, dueAt: e.data.at, revision: recorded.revision, cause: causeOf(recorded) })
      return
    }
    case 'TranscriptionStarted':
      if (doc) await set({ status: 'running', attempt: e.data.attempt, dueAt: e.data.retryAt })
      return
    case 'TranscriptionProgressed':
      if (doc) await set({ dueAt: e.data.retryAt })
      return
    case 'TranscriptionAttemptFailed':
      if (doc) await set({ status: 'queued', dueAt: e.data.retryAt })
      return
    case 'TranscriptionReleased':
      if (doc) await set({ status: 'queued', dueAt: e.data.at })
      return
    case 'NoteFailed':
      if (doc) await set({ status: 'settling', dueAt: e.data.at })
      return
    case 'NoteReady':
    case 'TranscriptionSettled':
      if (doc) await jobs.deleteOne({ _id: noteId })
      return
  }
}
