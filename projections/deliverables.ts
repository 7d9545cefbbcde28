// The deliverables read model: one document per deliverable, listed per note newest first.
// Keyed by deliverable id (created once), so re-applying the event changes nothing.
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import { noteStream } from '../domain/notes/note.ts'
import type { DeliverableEvent, DeliverableFile } from '../domain/deliverables/deliverable.ts'
import type { DeliverableSection } from '../domain/language/content.ts'
import { deliverableMarkdown } from '../domain/deliverables/deliverable.ts'
import type { Projection } from './runner.ts'

export const DELIVERABLES = 'deliverables'

export interface DeliverableDoc {
  _id: string
  [key: string]: unknown
  noteId: string
  accountId: string
  kind: 'email' | 'document' | 'slides'
  template: string
  locale: 'es' | 'en'
  status: 'ready'
  title: string
  subject: string | null
  sections: DeliverableSection[]
  content: string
  file: DeliverableFile
  engine: string
  model: string
  version: string
  createdAt: string
}

export const deliverablesProjection: Projection = {
  name: 'deliverables',
  // Note streams too, for `NoteDeleted` only: a deleted note's deliverables go with it.
  filter: { categories: ['deliverable', 'note'] },
  collections: [DELIVERABLES],
  async setup(docs) {
    await docs.collection(DELIVERABLES).createIndex({ keys: { noteId: 1, createdAt: -1, _id: -1 }, name: 'by_note_newest' })
  },
  async handle(events, docs) {
    for (const e of events) await apply(e)
    async function apply(recorded: RecordedEvent) {
      if (recorded.type === 'NoteDeleted') {
        await docs.collection(DELIVERABLES).deleteMany({ noteId: noteStream.idOf(recorded.streamName) })
        return
      }
      const e = toDomainEvent<DeliverableEvent>(recorded)
      if (e.type !== 'DeliverableCreated') return
      const d = e.data
      const doc: DeliverableDoc = {
        _id: d.deliverableId,
        noteId: d.noteId,
        accountId: d.accountId,
        kind: d.kind,
        template: d.template,
        locale: d.locale,
        status: 'ready',
        title: d.title,
        subject: d.subject,
        sections: d.sections,
        content: deliverableMarkdown(d, d.kind),
        file: d.file,
        engine: d.engine,
        model: d.model,
        version: d.version,
        createdAt: d.at,
      }
      await docs.collection<DeliverableDoc>(DELIVERABLES).replaceOne({ _id: d.deliverableId }, doc, { upsert: true })
    }
  },
}
