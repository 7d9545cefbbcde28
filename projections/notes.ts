// The notes read models: `notes` (one document per note, what lists and filters read) and
// `transcripts` (segments and full text per note). Guarded by stream revision, so re-applying an
// event changes nothing.
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import { statusOf, type NoteEvent, type Phase } from '../domain/notes/note.ts'
import { fullTextOf, speakerStats, type Transcript, type SpeakerStats } from '../domain/notes/transcript.ts'
import { uniqueTokens } from '../domain/search/tokens.ts'
import { cut, FREE_PLAN_PREVIEW } from '../domain/transcripts/preview.ts'
import { withLineSpeakers, type SegmentSpeakersChanged, type TranscriptTextReplaced } from '../domain/notes/noteTranscript.ts'
import { applyBatched } from './batchedDocuments.ts'
import { replaceIfNewer } from './revisionGuard.ts'
import type { Projection } from './runner.ts'
import type { Note } from '../contract/notes.ts'
import { noteStream } from '../domain/notes/note.ts'

export const NOTES = 'notes'
export const TRANSCRIPTS = 'transcripts'

export interface NoteDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  title: string
  description: string | null
  status: 'processing' | 'ready' | 'failed'
  phase: Phase
  errorCode: string | null
  /** The failure's actionable text (NoteFailed's message); null unless failed. */
  errorMessage?: string | null
  sourceType: 'upload' | 'recording' | 'url'
  origin: string
  provider: string | null
  sourceUrl: string | null
  folderId: string | null
  tags: string[]
  durationSeconds: number | null
  language: string | null
  recordedAt: string | null
  createdAt: string
  updatedAt: string
  progress: { stage: string; percent: number | null; attempt: number } | null
  keepAudio: boolean
  /** When the note's audio was stored (upload received, import media kept), and deleted by retention. */
  audioStoredAt: string | null
  audioDeletedAt: string | null
  /** Tokens of the transcript, kept apart so a title edit can rebuild `searchTokens`. */
  transcriptTokens: string[]
  searchTokens: string[]
  /** The same for the free plan's preview of the transcript (domain/transcripts/preview.ts): what a free search may match. */
  previewTranscriptTokens?: string[]
  previewSearchTokens?: string[]
  revision: number
  /** JSON of `toNote(this)`, kept current by the projection, so lists serve it as it is. */
  view?: string
}

/** The Note of the contract, from its read-model document. */
export function toNote(d: NoteDoc): Note {
  return {
    id: d._id,
    title: d.title,
    description: d.description,
    status: d.status,
    errorCode: d.errorCode,
    errorMessage: d.status === 'failed' ? (d.errorMessage ?? null) : null,
    sourceType: d.sourceType,
    origin: d.origin as Note['origin'],
    sourceUrl: d.sourceUrl,
    folderId: d.folderId,
    tags: d.tags,
    durationSeconds: d.durationSeconds,
    language: d.language,
    recordedAt: d.recordedAt,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    progress: d.progress as Note['progress'],
    keepAudio: d.keepAudio ?? false,
    audioDeletedAt: d.audioDeletedAt ?? null,
  }
}

export interface TranscriptDoc extends Transcript {
  _id: string
  [key: string]: unknown
  accountId: string
  fullText: string
  speakers: SpeakerStats[]
  revision: number
}

export const notesProjection: Projection = {
  name: 'notes',
  filter: { categories: ['note'] },
  collections: [NOTES, TRANSCRIPTS],
  async setup(docs) {
    const notes = docs.collection(NOTES)
    await notes.createIndex({ keys: { accountId: 1, createdAt: -1, _id: -1 }, name: 'by_account_newest' })
    await notes.createIndex({ keys: { accountId: 1, status: 1, createdAt: -1, _id: -1 }, name: 'by_account_status' })
    await notes.createIndex({ keys: { accountId: 1, folderId: 1, createdAt: -1, _id: -1 }, name: 'by_account_folder' })
    await notes.createIndex({ keys: { audioDeletedAt: 1, keepAudio: 1, audioStoredAt: 1 }, name: 'audio_retention' })
    await notes.createIndex({ keys: { phase: 1, createdAt: 1 }, name: 'upload_expiry' })
  },
  async handle(events, docs) {
    // One read of the notes the batch touches and one write of those it changed
    // (projections/batchedDocuments.ts): an edit costs two round trips per batch, not per event.
    await applyBatched(docs.collection<NoteDoc>(NOTES), events, {
      idOf: (e) => noteIdOf(e.streamName),
      created: (e) => (e.type === 'NoteCreated' ? createdNote(e) : null),
      evolve: (doc, e) => evolveNote(doc, e, docs),
    })
  },
}

const noteIdOf = (streamName: string) => noteStream.idOf(streamName)

/**
 * The note a `NoteCreated` brings into being. Inserted if absent (projections/bulkCreates.ts), not
 * upserted: another instance that created it meanwhile (and maybe moved it on) wins.
 */
function createdNote(recorded: RecordedEvent): NoteDoc {
  const d = toDomainEvent<Extract<NoteEvent, { type: 'NoteCreated' }>>(recorded).data
  const at = d.at
  const phase: Phase = d.upload ? 'awaiting_upload' : 'queued'
  const created: NoteDoc = {
    _id: noteIdOf(recorded.streamName),
    accountId: d.accountId,
    title: d.title,
    description: null,
    status: statusOf(phase),
    phase,
    errorCode: null,
    errorMessage: null,
    sourceType: d.sourceType,
    origin: d.origin,
    provider: d.provider,
    sourceUrl: d.sourceUrl,
    folderId: null,
    tags: [],
    durationSeconds: null,
    language: d.language,
    recordedAt: null,
    createdAt: at,
    updatedAt: at,
    progress: { stage: phase, percent: null, attempt: 0 },
    keepAudio: d.keepAudio,
    audioStoredAt: null,
    audioDeletedAt: null,
    transcriptTokens: [],
    searchTokens: uniqueTokens(d.title),
    previewTranscriptTokens: [],
    previewSearchTokens: uniqueTokens(d.title),
    revision: recorded.revision,
  }
  created.view = JSON.stringify(toNote(created))
  return created
}

/** The note after `recorded` (null: deleted; `doc` itself: unchanged). Writes the note's transcript on the way. */
async function evolveNote(doc: NoteDoc | null, recorded: RecordedEvent, docs: DocumentStore): Promise<NoteDoc | null> {
  const e = toDomainEvent<NoteEvent | TranscriptTextReplaced | SegmentSpeakersChanged>(recorded)
  const id = noteIdOf(recorded.streamName)
  if (e.type === 'NoteDeleted') {
    // Deleted: nothing of the note stays, whatever the revision (a rebuild meets it too).
    await docs.collection(TRANSCRIPTS).deleteOne({ _id: id })
    return null
  }
  if (!doc || doc.revision >= recorded.revision) return doc
  const at = e.data.at

  const set: Partial<NoteDoc> = { revision: recorded.revision, updatedAt: at }
  switch (e.type) {
    case 'NoteUploadReceived':
      set.durationSeconds = Math.round(e.data.durationSeconds)
      set.audioStoredAt = at
      break
    case 'NoteAudioStored':
      set.audioStoredAt = at
      break
    case 'NoteAudioDeleted':
      set.audioDeletedAt = at
      break
    case 'NoteFinalized':
      set.phase = 'queued'
      set.progress = { stage: 'queued', percent: null, attempt: 0 }
      if (e.data.title !== null) set.title = e.data.title
      break
    case 'NoteEdited':
      if (e.data.title !== undefined) set.title = e.data.title
      if (e.data.description !== undefined) set.description = e.data.description
      if (e.data.folderId !== undefined) set.folderId = e.data.folderId
      if (e.data.tags !== undefined) set.tags = e.data.tags
      if (e.data.keepAudio !== undefined) set.keepAudio = e.data.keepAudio
      break
    case 'NoteTranscribed': {
      const t = e.data.transcript
      const fullText = fullTextOf(t.segments)
      set.transcriptTokens = uniqueTokens(fullText)
      set.previewTranscriptTokens = previewTokens(t.segments)
      const transcript: TranscriptDoc = { _id: id, accountId: doc.accountId, ...t, fullText, speakers: speakerStats(t.segments), revision: recorded.revision }
      // Guarded by revision: a late writer (another instance, see projections/lease.ts) never
      // replaces a newer transcript.
      await replaceIfNewer(docs.collection<TranscriptDoc>(TRANSCRIPTS), transcript)
      break
    }
    case 'TranscriptTextReplaced': {
      // An edit changes the text everywhere it is read: segments, full text, search tokens.
      const transcripts = docs.collection<TranscriptDoc>(TRANSCRIPTS)
      const t = await transcripts.findOne({ _id: id })
      if (!t) break
      const changed = new Map(e.data.changes.map((c) => [c.sequence, c]))
      const segments = t.segments.map((seg) => {
        const c = changed.get(seg.sequence)
        return c ? { ...seg, text: c.after, words: c.words } : seg
      })
      const fullText = fullTextOf(segments)
      set.transcriptTokens = uniqueTokens(fullText)
      set.previewTranscriptTokens = previewTokens(segments)
      await transcripts.updateOne({ _id: id, revision: t.revision }, { $set: { segments, fullText, revision: recorded.revision } })
      break
    }
    case 'SegmentSpeakersChanged': {
      const transcripts = docs.collection<TranscriptDoc>(TRANSCRIPTS)
      const t = await transcripts.findOne({ _id: id })
      if (!t) break
      const segments = withLineSpeakers(t.segments, e.data.changes)
      await transcripts.updateOne({ _id: id, revision: t.revision }, { $set: { segments, speakers: speakerStats(segments), revision: recorded.revision } })
      break
    }
    case 'NoteReady':
      set.phase = 'ready'
      set.progress = null
      if (e.data.durationSeconds !== null) set.durationSeconds = Math.round(e.data.durationSeconds)
      if (e.data.language !== null) set.language = e.data.language
      break
    case 'NoteFailed':
      set.phase = 'failed'
      set.progress = null
      set.errorCode = e.data.errorCode
      set.errorMessage = e.data.message
      break
    // The transcription pipeline (domain/notes/transcriptionJob.ts): progress while processing.
    case 'TranscriptionStarted':
      set.phase = 'processing'
      set.progress = { stage: doc.sourceType === 'url' ? 'downloading' : 'decoding', percent: null, attempt: e.data.attempt }
      break
    case 'TranscriptionProgressed':
      set.progress = { stage: e.data.stage, percent: e.data.percent, attempt: e.data.attempt }
      break
    case 'TranscriptionAttemptFailed':
    case 'TranscriptionReleased':
      set.phase = 'queued'
      set.progress = { stage: 'queued', percent: null, attempt: e.data.attempt }
      break
    case 'NoteSourceDescribed':
      if (e.data.title !== undefined) set.title = e.data.title
      if (e.data.description !== undefined) set.description = e.data.description
      if (e.data.recordedAt !== undefined) set.recordedAt = e.data.recordedAt
      if (e.data.durationSeconds !== undefined) set.durationSeconds = e.data.durationSeconds === null ? null : Math.round(e.data.durationSeconds)
      break
    case 'TranscriptionSettled':
      break
  }
  if (set.phase) set.status = statusOf(set.phase)
  if (set.title !== undefined || set.description !== undefined || set.transcriptTokens) {
    const title = set.title ?? doc.title
    const description = set.description !== undefined ? set.description : doc.description
    set.searchTokens = uniqueTokens(title, description, ...(set.transcriptTokens ?? doc.transcriptTokens))
    set.previewSearchTokens = uniqueTokens(title, description, ...(set.previewTranscriptTokens ?? doc.previewTranscriptTokens ?? []))
  }
  const next: NoteDoc = { ...doc, ...set }
  next.view = JSON.stringify(toNote(next))
  return next
}

/** The tokens of the part of a transcript the free plan's preview shows. */
const previewTokens = (segments: readonly { text: string }[]) => uniqueTokens(fullTextOf(cut(segments, FREE_PLAN_PREVIEW).shown as Transcript['segments']))
