// Creates in bulk, for a projection whose documents come into being with one event (a note's
// `NoteCreated`) and are only inserted then, never overwritten (whoever inserted first wins).
// On a remote read-model store every write is a round trip, and creates are most of what a busy
// log carries (every `POST /v1/notes`): a run of consecutive creates in a batch becomes one
// `insertManyIfAbsent` per collection, a fixed number of round trips whatever its length.
// Every other event is applied one at a time, as before, after the creates before it have been
// written, so the result is exactly that of applying the events one by one.
import type { Doc, DocumentStore } from '../ports/documentStore.ts'
import type { RecordedEvent } from '../ports/eventStore.ts'
import { noteStream } from '../domain/notes/note.ts'

/** The documents an event creates (insert if absent), by collection; null for any other event. */
export type Creates = (event: RecordedEvent) => { collection: string; doc: Doc }[] | null

export async function applyWithBulkCreates(events: readonly RecordedEvent[], docs: DocumentStore, creates: Creates, apply: (event: RecordedEvent) => Promise<void>): Promise<void> {
  let pending = new Map<string, Doc[]>()
  const flush = async () => {
    const run = pending
    pending = new Map()
    for (const [collection, list] of run) await docs.collection(collection).insertManyIfAbsent(list)
  }
  for (const event of events) {
    const created = creates(event)
    if (created === null) {
      await flush()
      await apply(event)
      continue
    }
    for (const { collection, doc } of created) (pending.get(collection) ?? pending.set(collection, []).get(collection)!).push(doc)
  }
  await flush()
}

/** Who owns each created note, `{ _id: noteId, accountId }` in `collection`: a note never changes owner. */
export const noteOwners =
  (collection: string): Creates =>
  (e) =>
    e.type === 'NoteCreated' ? [{ collection, doc: { _id: noteStream.idOf(e.streamName), accountId: String(e.data.accountId) } }] : null
