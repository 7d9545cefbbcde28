// Queries over the notes read models: the filtered, cursor-paged list and the note detail.
import { DomainError } from '../domain/errors.ts'
import { tokenize } from '../domain/search/tokens.ts'
import type { DocumentStore, Filter } from '../ports/documentStore.ts'
import { NOTES, TRANSCRIPTS, type NoteDoc, type TranscriptDoc } from '../projections/notes.ts'
import type { Analysis, Chapter } from '../contract/analysis.ts'
import type { ListNotesQuery, Note, NoteDetail, NoteList } from '../contract/notes.ts'

/**
 * Written by the analysis projection (projections/analysis.ts): `analyses` holds one document per
 * generation (`{ noteId, accountId, template, latest, analysis }`), `outlines` one per note
 * (`{ _id: noteId, accountId, outline, attemptedAt, generated }`).
 */
import { ANALYSES, OUTLINES } from '../projections/analysis.ts'
export { ANALYSES, OUTLINES }

export function toNote(d: NoteDoc): Note {
  return {
    id: d._id,
    title: d.title,
    description: d.description,
    status: d.status,
    errorCode: d.errorCode,
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

const LIST_FIELDS = Object.fromEntries(
  ['accountId', 'title', 'description', 'status', 'errorCode', 'sourceType', 'origin', 'sourceUrl', 'folderId', 'tags', 'durationSeconds', 'language', 'recordedAt', 'createdAt', 'updatedAt', 'progress', 'keepAudio', 'audioDeletedAt'].map((f) => [f, 1 as const]),
)

export async function listNotes(docs: DocumentStore, accountId: string, q: ListNotesQuery): Promise<NoteList> {
  const notes = docs.collection<NoteDoc>(NOTES)
  const filter: Filter = { accountId }
  if (q.status) filter.status = q.status
  if (q.folderId !== undefined) filter.folderId = q.folderId === 'null' ? null : q.folderId
  if (q.since) filter.createdAt = { $gte: new Date(q.since).toISOString() }
  if (q.tags && q.tags.length > 0) filter.tags = { $all: q.tags }
  if (q.origin && q.origin.length > 0) filter.origin = { $in: q.origin }
  const words = tokenize(q.q)
  if (words.length > 0) filter.searchTokens = { $all: [...new Set(words)] }
  if (q.cursor) {
    const at = await notes.findOne({ _id: q.cursor, accountId }, { projection: { createdAt: 1 } })
    if (!at) throw new DomainError('invalid_query', 'cursor is not a nextCursor of yours; start again without it.')
    // Strictly after the cursor in (createdAt desc, id desc): notes added meanwhile sort before it.
    filter.$or = [{ createdAt: { $lt: at.createdAt } }, { createdAt: at.createdAt, _id: { $lt: at._id } }]
  }
  const page = await notes.find(filter, { sort: { createdAt: -1, _id: -1 }, limit: q.limit + 1, projection: LIST_FIELDS })
  const hasMore = page.length > q.limit
  const shown = hasMore ? page.slice(0, q.limit) : page
  return { notes: shown.map(toNote), nextCursor: hasMore ? shown[shown.length - 1]!._id : null, hasMore }
}

export async function findNote(docs: DocumentStore, accountId: string, noteId: string): Promise<NoteDoc> {
  const doc = await docs.collection<NoteDoc>(NOTES).findOne({ _id: noteId, accountId })
  if (!doc) throw new DomainError('not_found', 'No note with that id belongs to you.')
  return doc
}

export async function getNoteDetail(docs: DocumentStore, accountId: string, noteId: string): Promise<NoteDetail> {
  const doc = await findNote(docs, accountId, noteId)
  const [transcript, analyses, outline] = await Promise.all([
    docs.collection<TranscriptDoc>(TRANSCRIPTS).findOne({ _id: noteId }, { projection: { fullText: 1, languagesDetected: 1, speakers: 1 } }),
    docs.collection(ANALYSES).find({ noteId, accountId, latest: true }, { sort: { template: 1 } }),
    docs.collection(OUTLINES).findOne({ _id: noteId, accountId }),
  ])
  return {
    ...toNote(doc),
    transcript: transcript
      ? { fullText: transcript.fullText, languagesDetected: transcript.languagesDetected, speakerCount: transcript.speakers.length > 0 ? transcript.speakers.length : null }
      : null,
    aiNotes: analyses.map((a) => a.analysis as Analysis),
    outline: (outline?.outline as Chapter[] | undefined) ?? [],
  }
}
