// Read models of the analysis features: `analyses` (one document per generation; the latest per
// note and template is flagged `latest: true`, earlier generations stay as history) and
// `outlines` (one document per note). The note detail (readmodels/notes.ts) reads both.
// Idempotent: generations are keyed by event id and carry their stream revision; the outline
// document carries the revision it reflects.
import type { DocumentStore } from '../ports/documentStore.ts'
import { categoryOf, toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import { noteStream } from '../domain/notes/note.ts'
import type { AnalysisEvent } from '../domain/analysis/analysis.ts'
import type { AnalysisDraft, ChapterDraft } from '../domain/language/content.ts'
import type { Projection } from './runner.ts'
import { replaceRead } from './revisionGuard.ts'

export const ANALYSES = 'analyses'
export const OUTLINES = 'outlines'

export interface AnalysisDoc {
  _id: string
  [key: string]: unknown
  noteId: string
  accountId: string
  template: string
  latest: boolean
  revision: number
  /** The Analysis as the API returns it. */
  analysis: AnalysisDraft & { template: string; model: string; updatedAt: string }
  engine: string
  model: string
  version: string
  /** The speaker names it was made with, by label (domain/analysis/analysis.ts, `AnalysisGenerated`). */
  speakerNames: Record<string, string>
  /** Which speaker had which line then; null on analyses recorded before lines could move. */
  attribution: string | null
}

export interface OutlineDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  outline: ChapterDraft[]
  attemptedAt: string | null
  generated: boolean
  engine: string | null
  model: string | null
  version: string | null
  revision: number
}

export const analysisProjection: Projection = {
  name: 'analysis',
  // Note streams too, for `NoteDeleted` only: a deleted note's analyses and outline go with it.
  filter: { categories: ['analysis', 'note'] },
  collections: [ANALYSES, OUTLINES],
  async setup(docs) {
    await docs.collection(ANALYSES).createIndex({ keys: { noteId: 1, template: 1, revision: -1 }, name: 'by_note_template' })
  },
  async handle(events, docs) {
    for (const e of events) await apply(e, docs)
  },
}

async function apply(recorded: RecordedEvent, docs: DocumentStore) {
  if (recorded.type === 'NoteDeleted') {
    const noteId = noteStream.idOf(recorded.streamName)
    await docs.collection(ANALYSES).deleteMany({ noteId })
    await docs.collection(OUTLINES).deleteOne({ _id: noteId })
    return
  }
  if (categoryOf(recorded.streamName) !== 'analysis') return
  const e = toDomainEvent<AnalysisEvent>(recorded)
  const d = e.data
  if (e.type === 'AnalysisGenerated') {
    const analyses = docs.collection<AnalysisDoc>(ANALYSES)
    await analyses.updateMany({ noteId: d.noteId, template: e.data.template, revision: { $lt: recorded.revision }, latest: true }, { $set: { latest: false } })
    const newer = await analyses.findOne({ noteId: d.noteId, template: e.data.template, revision: { $gt: recorded.revision } }, { projection: { _id: 1 } })
    const doc: AnalysisDoc = {
      _id: recorded.id,
      noteId: d.noteId,
      accountId: d.accountId,
      template: e.data.template,
      latest: !newer,
      revision: recorded.revision,
      analysis: { template: e.data.template, ...e.data.analysis, model: d.model, updatedAt: d.at },
      engine: d.engine,
      model: d.model,
      version: d.version,
      speakerNames: e.data.speakers ?? {},
      attribution: e.data.attribution ?? null,
    }
    await analyses.replaceOne({ _id: recorded.id }, doc, { upsert: true })
    return
  }
  if (e.type === 'OutlineGenerated' || e.type === 'OutlineFailed') {
    const outlines = docs.collection<OutlineDoc>(OUTLINES)
    const current = await outlines.findOne({ _id: d.noteId })
    if (current && current.revision >= recorded.revision) return
    const next: OutlineDoc =
      e.type === 'OutlineGenerated'
        ? { _id: d.noteId, accountId: d.accountId, outline: e.data.chapters, attemptedAt: d.at, generated: true, engine: d.engine, model: d.model, version: d.version, revision: recorded.revision }
        : {
            _id: d.noteId,
            accountId: d.accountId,
            outline: current?.outline ?? [],
            attemptedAt: d.at,
            generated: current?.generated ?? false,
            engine: current?.engine ?? null,
            model: current?.model ?? null,
            version: current?.version ?? null,
            revision: recorded.revision,
          }
    // Over the revision read (projections/revisionGuard.ts): a late instance's older outline is dropped.
    await replaceRead(outlines, current, next)
  }
}
