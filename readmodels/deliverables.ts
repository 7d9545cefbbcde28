// Queries over the deliverables read model (download links on the configured base URL).
import { DomainError } from '../domain/errors.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { DELIVERABLES, type DeliverableDoc } from '../projections/deliverables.ts'
import type { Deliverable } from '../contract/deliverables.ts'
import type { DeliverableFile } from '../domain/deliverables/deliverable.ts'
import { findNote } from './notes.ts'

export const deliverableDownloadPath = (noteId: string, id: string) => `/v1/notes/${noteId}/deliverables/${id}/file`

export function toDeliverable(d: DeliverableDoc, baseUrl: string): Deliverable {
  return {
    id: d._id,
    noteId: d.noteId,
    kind: d.kind,
    template: d.template,
    locale: d.locale,
    status: d.status,
    title: d.title,
    content: d.content,
    createdAt: d.createdAt,
    fileName: d.file.fileName,
    contentType: d.file.contentType,
    sizeBytes: d.file.sizeBytes,
    downloadUrl: `${baseUrl}${deliverableDownloadPath(d.noteId, d._id)}`,
    model: d.model,
  }
}

export async function listDeliverables(docs: DocumentStore, accountId: string, noteId: string, baseUrl: string): Promise<{ items: Deliverable[] }> {
  await findNote(docs, accountId, noteId)
  const found = await docs.collection<DeliverableDoc>(DELIVERABLES).find({ noteId, accountId }, { sort: { createdAt: -1, _id: -1 } })
  return { items: found.map((d) => toDeliverable(d, baseUrl)) }
}

export async function getDeliverable(docs: DocumentStore, accountId: string, id: string, baseUrl: string): Promise<Deliverable | null> {
  const d = await docs.collection<DeliverableDoc>(DELIVERABLES).findOne({ _id: id, accountId })
  return d ? toDeliverable(d, baseUrl) : null
}

/** Where the file of one deliverable of the caller's note is kept. */
export async function deliverableFile(docs: DocumentStore, accountId: string, noteId: string, id: string): Promise<DeliverableFile> {
  const d = await docs.collection<DeliverableDoc>(DELIVERABLES).findOne({ _id: id, noteId, accountId })
  if (!d) throw new DomainError('not_found', 'No deliverable with that id belongs to this note of yours.')
  return d.file
}
