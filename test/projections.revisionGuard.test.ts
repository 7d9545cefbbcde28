// A late writer cannot put a note back: two instances of the notes projection (a rolling deploy,
// or a lease taken over from a holder that was only slow) both read the note at revision 0; one
// applies revisions 1 and 2; the other, late, applies revision 1 on what it read. The revision
// read is in the update's filter, so the late write matches nothing. Before, it `$set` the old
// title back over revision 2.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { notesProjection, NOTES } from '../projections/notes.ts'
import { noteStream } from '../domain/notes/note.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { RecordedEvent } from '../ports/eventStore.ts'

const noteId = randomUUID()
const at = '2026-01-01T00:00:00.000Z'
let position = 0
const recorded = (revision: number, type: string, data: Record<string, unknown>): RecordedEvent =>
  ({ id: randomUUID(), streamName: noteStream.of(noteId), revision, globalPosition: position++, type, data, metadata: {}, created: new Date(at) }) as unknown as RecordedEvent

t.test('given a note at revision 2, when a late instance applies revision 1 on its stale read, then the note stays at revision 2', async (t) => {
  const docs = openEmbeddedDocumentStore({ path: ':memory:' })
  t.teardown(() => docs.close())
  await notesProjection.setup?.(docs)
  const created = recorded(0, 'NoteCreated', { noteId, accountId: 'a1', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'First', language: null, keepAudio: false, upload: { filename: 'a.wav', contentType: 'audio/wav', declaredBytes: null }, jobId: null, reservationId: null, at })
  const edit1 = recorded(1, 'NoteEdited', { title: 'Second', at })
  const edit2 = recorded(2, 'NoteEdited', { title: 'Third', at })
  await notesProjection.handle([created], docs)
  const staleRead = await docs.collection(NOTES).findOne({ _id: noteId })

  await notesProjection.handle([edit1, edit2], docs)
  // The late instance: its reads answer what it saw before the others wrote.
  const late: DocumentStore = new Proxy(docs, {
    get(target, prop, receiver) {
      if (prop !== 'collection') return Reflect.get(target, prop, receiver)
      return (name: string) => {
        const c = target.collection(name)
        if (name !== NOTES) return c
        return new Proxy(c, { get: (cc, m, r) => (m === 'findOne' ? async () => structuredClone(staleRead) : (Reflect.get(cc, m, r) as (...a: unknown[]) => unknown).bind(cc)) })
      }
    },
  })
  await notesProjection.handle([edit1], late)
  const note = await docs.collection(NOTES).findOne({ _id: noteId })
  t.equal(note?.title, 'Third', 'the late write changed nothing')
  t.equal(note?.revision, 2)
})
