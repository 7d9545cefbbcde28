// Highlights (every analysis item that has an anchor, and the chapters) and markers (the
// chapters) of a note, ordered by time. Free reads over the analysis read models.
import type { DocumentStore } from '../ports/documentStore.ts'
import { ANALYSES, type AnalysisDoc } from '../projections/analysis.ts'
import { mmss } from '../domain/language/time.ts'
import type { Highlight, HighlightList, MarkerList } from '../contract/highlights.ts'
import { findNote } from './notes.ts'
import { readOutline } from './analysis.ts'

export async function listHighlights(docs: DocumentStore, accountId: string, noteId: string, template?: string): Promise<HighlightList> {
  await findNote(docs, accountId, noteId)
  const [analyses, outline] = await Promise.all([
    docs.collection<AnalysisDoc>(ANALYSES).find({ noteId, accountId, latest: true, ...(template ? { template } : {}) }, { sort: { template: 1 } }),
    readOutline(docs, accountId, noteId),
  ])
  const out: Highlight[] = []
  const add = (h: Omit<Highlight, 'time'>) => out.push({ ...h, time: mmss(h.startMs) })
  for (const { analysis: a } of analyses) {
    if (!a.anchors) continue
    a.keyPoints.forEach((text, i) => a.anchors!.keyPoints[i] != null && add({ kind: 'key_point', text, startMs: a.anchors!.keyPoints[i]!, endMs: null, template: a.template, assignee: null, deadline: null }))
    a.actionItems.forEach((x, i) => a.anchors!.actionItems[i] != null && add({ kind: 'action_item', text: x.text, startMs: a.anchors!.actionItems[i]!, endMs: null, template: a.template, assignee: x.assignee, deadline: x.deadline }))
    a.decisions.forEach((text, i) => a.anchors!.decisions[i] != null && add({ kind: 'decision', text, startMs: a.anchors!.decisions[i]!, endMs: null, template: a.template, assignee: null, deadline: null }))
    a.questions.forEach((text, i) => a.anchors!.questions[i] != null && add({ kind: 'question', text, startMs: a.anchors!.questions[i]!, endMs: null, template: a.template, assignee: null, deadline: null }))
  }
  for (const c of outline.outline) add({ kind: 'chapter', text: c.headline, startMs: c.startMs, endMs: c.endMs, template: null, assignee: null, deadline: null })
  out.sort((x, y) => x.startMs - y.startMs || (x.kind === 'chapter' ? -1 : 0) - (y.kind === 'chapter' ? -1 : 0))
  return { noteId, highlights: out }
}

export async function listMarkers(docs: DocumentStore, accountId: string, noteId: string): Promise<MarkerList> {
  await findNote(docs, accountId, noteId)
  const outline = await readOutline(docs, accountId, noteId)
  return { noteId, markers: outline.outline.map((c) => ({ startMs: c.startMs, endMs: c.endMs, time: mmss(c.startMs), title: c.headline })) }
}
