// The retrieval index of the ask features: BM25 statistics over transcript segments, kept in the
// document store (no `$text`: FerretDB lacks it). One document per note in `segment_index`:
//   terms     the note's distinct search terms (multikey: which notes can match a query)
//   postings  `p_<term>` -> [segmentIndex, termFrequency, segmentIndex, termFrequency, ...]
//   segIds, segLens   segment uuids and lengths (in terms), by segment index
// and one document per account in `segment_stats` (segments and total length across the
// account's notes) for the library-wide idf and average length. A query reads only the postings
// of its own terms (a projection on `postings.p_<term>`), never whole transcripts.
//
// Idempotent: a note's document carries the note stream revision it was built from, and the
// account statistics are recomputed from the note documents, so re-applying an event (after a
// crash between writes) converges to the same state.
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import type { TranscriptTextReplaced } from '../domain/notes/noteTranscript.ts'
import { termFrequencies } from '../domain/search/terms.ts'
import type { Projection } from './runner.ts'
import { applyWithBulkCreates, noteOwners } from './bulkCreates.ts'
import { replaceRead } from './revisionGuard.ts'
import { noteStream } from '../domain/notes/note.ts'

export const SEGMENT_INDEX = 'segment_index'
export const SEGMENT_STATS = 'segment_stats'
/** The account of each note, remembered from NoteCreated (NoteTranscribed does not repeat it). */
const OWNERS = 'segment_index_owners'

/** Field name of a term's postings (a prefix keeps terms like "constructor" harmless). */
export const postingsField = (term: string) => `p_${term}`

export interface SegmentIndexDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  revision: number
  terms: string[]
  postings: Record<string, number[]>
  segIds: string[]
  segLens: number[]
  segCount: number
  totalLength: number
}

export interface SegmentStatsDoc {
  _id: string
  [key: string]: unknown
  segments: number
  totalLength: number
}

/** The index document of one transcript. */
export function buildSegmentIndex(noteId: string, accountId: string, revision: number, segments: readonly { id: string; text: string }[]): SegmentIndexDoc {
  const postings: Record<string, number[]> = {}
  const segLens: number[] = []
  segments.forEach((s, i) => {
    const tf = termFrequencies(s.text)
    let len = 0
    for (const [term, n] of tf) {
      len += n
      ;(postings[postingsField(term)] ??= []).push(i, n)
    }
    segLens.push(len)
  })
  return {
    _id: noteId,
    accountId,
    revision,
    terms: Object.keys(postings)
      .map((k) => k.slice(2))
      .sort(),
    postings,
    segIds: segments.map((s) => s.id),
    segLens,
    segCount: segments.length,
    totalLength: segLens.reduce((a, b) => a + b, 0),
  }
}

export const segmentIndexProjection: Projection = {
  name: 'segment-index',
  // Every note event passes (most are ignored), so the checkpoint follows the note streams and
  // waiting for any note event's position works.
  filter: { categories: ['note'] },
  collections: [SEGMENT_INDEX, SEGMENT_STATS, OWNERS],
  async setup(docs) {
    await docs.collection(SEGMENT_INDEX).createIndex({ keys: { accountId: 1, terms: 1 }, name: 'by_account_term' })
  },
  async handle(events, docs) {
    await applyWithBulkCreates(events, docs, noteOwners(OWNERS), (e) => apply(e, docs))
  },
}

async function apply(recorded: RecordedEvent, docs: DocumentStore) {
  const e = toDomainEvent<NoteEvent | TranscriptTextReplaced>(recorded)
  const noteId = noteStream.idOf(recorded.streamName)
  const index = docs.collection<SegmentIndexDoc>(SEGMENT_INDEX)
  if (e.type === 'NoteDeleted') {
    const current = await index.findOne({ _id: noteId }, { projection: { accountId: 1 } })
    await index.deleteOne({ _id: noteId })
    await docs.collection(OWNERS).deleteOne({ _id: noteId })
    if (current) await refreshStats(docs, current.accountId)
    return
  }
  if (e.type === 'TranscriptTextReplaced') {
    const current = await index.findOne({ _id: noteId })
    if (!current || current.revision >= recorded.revision) return
    // Over the revision read only (projections/revisionGuard.ts): a late instance's write is dropped.
    if (await replaceRead(index, current, withChangedSegments(current, recorded.revision, e.data.changes))) await refreshStats(docs, current.accountId)
    return
  }
  if (e.type !== 'NoteTranscribed') return
  const current = await index.findOne({ _id: noteId }, { projection: { revision: 1, accountId: 1 } })
  if (current && current.revision >= recorded.revision) return
  const owner = await docs.collection(OWNERS).findOne({ _id: noteId })
  const accountId = (owner?.accountId as string | undefined) ?? (recorded.metadata.accountId as string | undefined)
  if (!accountId) return
  // `current` holds only `revision` and `accountId`: enough for the guard's filter.
  if (await replaceRead(index, current, buildSegmentIndex(noteId, accountId, recorded.revision, e.data.transcript.segments))) await refreshStats(docs, accountId)
}

/** The index after an edit: each changed segment's postings move from its old text to its new one. */
export function withChangedSegments(doc: SegmentIndexDoc, revision: number, changes: readonly { segmentId: string; before: string; after: string }[]): SegmentIndexDoc {
  const postings: Record<string, number[]> = structuredClone(doc.postings)
  const segLens = [...doc.segLens]
  for (const change of changes) {
    const i = doc.segIds.indexOf(change.segmentId)
    if (i === -1) continue
    for (const term of termFrequencies(change.before).keys()) {
      const list = postings[postingsField(term)]
      if (!list) continue
      const kept: number[] = []
      for (let k = 0; k < list.length; k += 2) if (list[k] !== i) kept.push(list[k]!, list[k + 1]!)
      if (kept.length > 0) postings[postingsField(term)] = kept
      else delete postings[postingsField(term)]
    }
    let len = 0
    for (const [term, n] of termFrequencies(change.after)) {
      len += n
      const list = (postings[postingsField(term)] ??= [])
      // Postings stay ordered by segment index, as buildSegmentIndex makes them.
      let at = 0
      while (at < list.length && list[at]! < i) at += 2
      list.splice(at, 0, i, n)
    }
    segLens[i] = len
  }
  return {
    ...doc,
    revision,
    postings,
    terms: Object.keys(postings)
      .map((k) => k.slice(2))
      .sort(),
    segLens,
    totalLength: segLens.reduce((a, b) => a + b, 0),
  }
}

async function refreshStats(docs: DocumentStore, accountId: string) {
  const notes = await docs.collection<SegmentIndexDoc>(SEGMENT_INDEX).find({ accountId }, { projection: { segCount: 1, totalLength: 1 } })
  const stats: SegmentStatsDoc = {
    _id: accountId,
    segments: notes.reduce((n, d) => n + d.segCount, 0),
    totalLength: notes.reduce((n, d) => n + d.totalLength, 0),
  }
  await docs.collection<SegmentStatsDoc>(SEGMENT_STATS).replaceOne({ _id: accountId }, stats, { upsert: true })
}
