// Queries over the notes read models: the filtered, cursor-paged list and the note detail.
import { DomainError } from '../domain/errors.ts'
import { tokenize } from '../domain/search/tokens.ts'
import type { DocumentStore, Filter } from '../ports/documentStore.ts'
import { NOTES, TRANSCRIPTS, toNote, type NoteDoc, type TranscriptDoc } from '../projections/notes.ts'
import type { Analysis, Chapter } from '../contract/analysis.ts'
import type { ListNotesQuery, Note, NoteDetail, NoteList } from '../contract/notes.ts'

/**
 * Written by the analysis projection (projections/analysis.ts): `analyses` holds one document per
 * generation (`{ noteId, accountId, template, latest, analysis }`), `outlines` one per note
 * (`{ _id: noteId, accountId, outline, attemptedAt, generated }`).
 */
import { ANALYSES, OUTLINES } from '../projections/analysis.ts'
import { cut, type ContentLimit, type CutCounts } from '../domain/transcripts/preview.ts'
import { fullTextOf } from '../domain/notes/transcript.ts'
export { ANALYSES, OUTLINES }

export { toNote }

const VIEW_FIELD = { view: 1 } as const
const LIST_FIELDS = Object.fromEntries(
  ['accountId', 'title', 'description', 'status', 'errorCode', 'errorMessage', 'sourceType', 'origin', 'sourceUrl', 'folderId', 'tags', 'durationSeconds', 'language', 'recordedAt', 'createdAt', 'updatedAt', 'progress', 'keepAudio', 'audioDeletedAt'].map((f) => [f, 1 as const]),
)

interface NotePage {
  docs: NoteDoc[]
  nextCursor: string | null
  hasMore: boolean
}

/** The page of notes a list query selects; `projection` says which fields come back. */
/** `limit`: the caller's plan's preview; a search then matches only what the preview shows of a transcript. */
async function findNotePage(docs: DocumentStore, accountId: string, q: ListNotesQuery, projection: Record<string, 1>, limit?: ContentLimit): Promise<NotePage> {
  const notes = docs.collection<NoteDoc>(NOTES)
  const filter: Filter = { accountId }
  if (q.status) filter.status = q.status
  if (q.folderId !== undefined) filter.folderId = q.folderId === 'null' ? null : q.folderId
  if (q.since) filter.createdAt = { $gte: new Date(q.since).toISOString() }
  if (q.tags && q.tags.length > 0) filter.tags = { $all: q.tags }
  if (q.origin && q.origin.length > 0) filter.origin = { $in: q.origin }
  const words = tokenize(q.q)
  if (words.length > 0) filter[limit ? 'previewSearchTokens' : 'searchTokens'] = { $all: [...new Set(words)] }
  if (q.cursor) {
    const at = await notes.findOne({ _id: q.cursor, accountId }, { projection: { createdAt: 1 } })
    if (!at) throw new DomainError('invalid_query', 'cursor is not a nextCursor of yours; start again without it.')
    // Strictly after the cursor in (createdAt desc, id desc): notes added meanwhile sort before it.
    filter.$or = [{ createdAt: { $lt: at.createdAt } }, { createdAt: at.createdAt, _id: { $lt: at._id } }]
  }
  const page = await notes.find(filter, { sort: { createdAt: -1, _id: -1 }, limit: q.limit + 1, projection })
  const hasMore = page.length > q.limit
  const shown = hasMore ? page.slice(0, q.limit) : page
  return { docs: shown, nextCursor: hasMore ? shown[shown.length - 1]!._id : null, hasMore }
}

export async function listNotes(docs: DocumentStore, accountId: string, q: ListNotesQuery, limit?: ContentLimit): Promise<NoteList> {
  const page = await findNotePage(docs, accountId, q, LIST_FIELDS, limit)
  return { notes: page.docs.map(toNote), nextCursor: page.nextCursor, hasMore: page.hasMore }
}

/**
 * The same NoteList as `listNotes`, as JSON text built from the notes' stored views (the notes
 * projection keeps each note's JSON ready), so a page costs neither copying documents nor
 * serialising them. Notes written before views existed are rendered from their fields.
 */
export async function listNotesJson(docs: DocumentStore, accountId: string, q: ListNotesQuery, limit?: ContentLimit): Promise<string> {
  const page = await findNotePage(docs, accountId, q, VIEW_FIELD, limit)
  const views = await Promise.all(
    page.docs.map(async (d) => d.view ?? JSON.stringify(toNote((await docs.collection<NoteDoc>(NOTES).findOne({ _id: d._id }))!))),
  )
  return `{"notes":[${views.join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)},"hasMore":${page.hasMore}}`
}

export async function findNote(docs: DocumentStore, accountId: string, noteId: string): Promise<NoteDoc> {
  const doc = await docs.collection<NoteDoc>(NOTES).findOne({ _id: noteId, accountId })
  if (!doc) throw new DomainError('not_found', 'No note with that id belongs to you.')
  return doc
}

/** Ids of the caller's notes filed in a folder. */
export async function noteIdsInFolder(docs: DocumentStore, accountId: string, folderId: string): Promise<string[]> {
  const found = await docs.collection<NoteDoc>(NOTES).find({ accountId, folderId }, { projection: { _id: 1 } })
  return found.map((n) => n._id)
}

/** The note with its transcript's full text, cut to `limit` (the caller's plan's preview) like the segments are. */
export async function getNoteDetail(docs: DocumentStore, accountId: string, noteId: string, limit: ContentLimit | undefined): Promise<NoteDetail> {
  const doc = await findNote(docs, accountId, noteId)
  const [transcript, analyses, outline] = await Promise.all([
    docs.collection<TranscriptDoc>(TRANSCRIPTS).findOne({ _id: noteId }, { projection: { fullText: 1, languagesDetected: 1, speakers: 1, ...(limit ? { segments: 1 } : {}) } }),
    docs.collection(ANALYSES).find({ noteId, accountId, latest: true }, { sort: { template: 1 } }),
    docs.collection(OUTLINES).findOne({ _id: noteId, accountId }),
  ])
  return {
    ...toNote(doc),
    transcript: transcript
      ? { ...fullTextWithin(transcript, limit), languagesDetected: transcript.languagesDetected, speakerCount: transcript.speakers.length > 0 ? transcript.speakers.length : null }
      : null,
    aiNotes: analyses.map((a) => a.analysis as Analysis),
    outline: (outline?.outline as Chapter[] | undefined) ?? [],
  }
}

function fullTextWithin(t: Pick<TranscriptDoc, 'fullText' | 'segments'>, limit: ContentLimit | undefined): { fullText: string; truncated?: true; truncation?: CutCounts } {
  if (!limit) return { fullText: t.fullText }
  const { shown, truncated, counts } = cut([...t.segments].sort((a, b) => a.sequence - b.sequence), limit)
  return truncated ? { fullText: fullTextOf(shown), truncated: true, truncation: counts } : { fullText: t.fullText }
}
