// Ranked retrieval over transcript segments (BM25) for the ask features, on the segment index
// read model. Only the caller's notes are ever read: every query is filtered by account.
import { idf, termScore } from '../domain/search/bm25.ts'
import { cut, type ContentLimit } from '../domain/transcripts/preview.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { NOTES, TRANSCRIPTS, type NoteDoc, type TranscriptDoc } from '../projections/notes.ts'
import type { SegmentHit, SegmentSearch, SegmentText } from '../commands/reads.ts'
import { speakerNamesOf, spokenBy } from './speakerNames.ts'
import { SEGMENT_INDEX, SEGMENT_STATS, postingsField, type SegmentIndexDoc, type SegmentStatsDoc } from '../projections/segmentIndex.ts'

const MAX_TERMS = 64

export async function searchSegments(docs: DocumentStore, q: SegmentSearch): Promise<SegmentHit[]> {
  const terms = [...q.weights.keys()].slice(0, MAX_TERMS)
  if (terms.length === 0) return []
  const projection: Record<string, 1> = { accountId: 1, segIds: 1, segLens: 1, segCount: 1, totalLength: 1 }
  for (const t of terms) projection[`postings.${postingsField(t)}`] = 1
  const index = docs.collection<SegmentIndexDoc>(SEGMENT_INDEX)
  let notes: SegmentIndexDoc[]
  let segments: number
  let totalLength: number
  if (q.noteId) {
    const doc = await index.findOne({ _id: q.noteId, accountId: q.accountId }, { projection })
    notes = doc ? [doc] : []
    segments = doc?.segCount ?? 0
    totalLength = doc?.totalLength ?? 0
  } else {
    const [found, stats] = await Promise.all([
      index.find({ accountId: q.accountId, terms: { $in: terms } }, { projection }),
      docs.collection<SegmentStatsDoc>(SEGMENT_STATS).findOne({ _id: q.accountId }),
    ])
    notes = found
    segments = stats?.segments ?? found.reduce((n, d) => n + d.segCount, 0)
    totalLength = stats?.totalLength ?? found.reduce((n, d) => n + d.totalLength, 0)
  }
  if (segments === 0 || notes.length === 0) return []
  const avg = totalLength / segments
  const df = new Map<string, number>()
  for (const d of notes) for (const t of terms) df.set(t, (df.get(t) ?? 0) + (d.postings?.[postingsField(t)]?.length ?? 0) / 2)
  const scores = new Map<string, SegmentHit>()
  for (const d of notes) {
    for (const t of terms) {
      const list = d.postings?.[postingsField(t)]
      if (!list) continue
      const weight = q.weights.get(t)!
      const termIdf = idf(segments, df.get(t)!)
      for (let i = 0; i < list.length; i += 2) {
        const seg = list[i]!
        const id = d.segIds[seg]
        if (!id) continue
        const add = weight * termScore(list[i + 1]!, d.segLens[seg] ?? 0, avg, termIdf)
        const hit = scores.get(id) ?? { noteId: d._id, segmentId: id, score: 0 }
        hit.score += add
        scores.set(id, hit)
      }
    }
  }
  return [...scores.values()].sort((a, b) => b.score - a.score || a.segmentId.localeCompare(b.segmentId)).slice(0, q.limit)
}

/**
 * The segments behind the hits, with their note's title; notes not ready (or not the caller's)
 * are left out, and with a `limit` (the free plan's preview) so is every segment past it.
 */
export async function segmentTexts(docs: DocumentStore, accountId: string, hits: readonly SegmentHit[], limit?: ContentLimit): Promise<SegmentText[]> {
  const noteIds = [...new Set(hits.map((h) => h.noteId))]
  if (noteIds.length === 0) return []
  const [notes, transcripts, names] = await Promise.all([
    docs.collection<NoteDoc>(NOTES).find({ _id: { $in: noteIds }, accountId, status: 'ready' }, { projection: { title: 1 } }),
    docs.collection<TranscriptDoc>(TRANSCRIPTS).find({ _id: { $in: noteIds }, accountId }, { projection: { segments: 1 } }),
    speakerNamesOf(docs, accountId, noteIds),
  ])
  const titles = new Map(notes.map((n) => [n._id, n.title]))
  const segments = new Map<string, { noteId: string; seg: TranscriptDoc['segments'][number] }>()
  for (const t of transcripts) {
    if (!titles.has(t._id)) continue
    for (const seg of cut(t.segments, limit).shown) segments.set(seg.id, { noteId: t._id, seg })
  }
  const out: SegmentText[] = []
  for (const h of hits) {
    const s = segments.get(h.segmentId)
    if (!s) continue
    out.push({ segmentId: h.segmentId, noteId: s.noteId, noteTitle: titles.get(s.noteId)!, startMs: s.seg.startMs, endMs: s.seg.endMs, ...spokenBy(s.seg.speakerLabel, names.get(s.noteId)), text: s.seg.text, score: h.score })
  }
  return out
}
