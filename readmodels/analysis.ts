// Queries over the analysis read models: the analyses of a note (latest per template) and its
// outline. Free reads; the note must be the caller's.
import { DomainError } from '../domain/errors.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { ANALYSES, OUTLINES, type AnalysisDoc, type OutlineDoc } from '../projections/analysis.ts'
import type { Analysis, AnalysisList, Outline } from '../contract/analysis.ts'
import type { PersistedDraft } from '../commands/reads.ts'
import { findNote } from './notes.ts'

export async function listAnalyses(docs: DocumentStore, accountId: string, noteId: string, template?: string): Promise<AnalysisList> {
  await findNote(docs, accountId, noteId)
  const found = await docs.collection<AnalysisDoc>(ANALYSES).find({ noteId, accountId, latest: true, ...(template ? { template } : {}) }, { sort: { template: 1 } })
  if (template && found.length === 0) throw new DomainError('analysis_not_generated', `The ${template} analysis has not been generated for this note; POST /v1/notes/${noteId}/analysis generates it.`, { template })
  return { noteId, analyses: found.map((d) => d.analysis as Analysis) }
}

/** Every generation of one template, newest first (the history regenerations keep). */
export async function analysisHistory(docs: DocumentStore, accountId: string, noteId: string, template: string) {
  await findNote(docs, accountId, noteId)
  const found = await docs.collection<AnalysisDoc>(ANALYSES).find({ noteId, accountId, template }, { sort: { revision: -1 } })
  return found.map((d) => ({ analysis: d.analysis as Analysis, engine: d.engine, model: d.model, version: d.version, latest: d.latest }))
}

export async function readOutline(docs: DocumentStore, accountId: string, noteId: string): Promise<Outline> {
  const doc = await docs.collection<OutlineDoc>(OUTLINES).findOne({ _id: noteId, accountId })
  return { noteId, outline: doc?.outline ?? [], attemptedAt: doc?.attemptedAt ?? null, generated: doc?.generated ?? false }
}

/** The persisted latest analysis of one template without what the API adds (template, model, time), the speaker names it was made with and who had which line. */
export async function latestAnalysisDraft(docs: DocumentStore, accountId: string, noteId: string, template: string): Promise<PersistedDraft | null> {
  const doc = await docs.collection<AnalysisDoc>(ANALYSES).findOne({ noteId, accountId, template, latest: true })
  if (!doc) return null
  const { template: _t, model: _m, updatedAt: _u, ...draft } = doc.analysis
  return { draft, speakerNames: doc.speakerNames ?? {}, attribution: doc.attribution ?? null }
}
