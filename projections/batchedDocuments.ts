// A batch of events applied to one collection's documents with one read and one write, whatever
// the batch's length: the documents the batch is about are read at once (`_id` $in), every event
// is applied to them in memory in log order, and each document that changed is written once, in
// one `writeGuarded` (projections/revisionGuard.ts explains the guard: the revision read is in
// the filter, so a late instance's write matches nothing). On a remote read-model store that is
// two round trips per batch instead of two per event; the live loop's batches grow with the
// backlog, so a busy log costs ever fewer round trips per event.
//
// A create is an insert if absent, made without reading (creates are most of a busy log). Where
// the insert collides (the document exists: a restart re-applying a batch, or another instance),
// the batch's events of that document are applied again to what is stored, so none is lost.
import type { Collection, Doc, GuardedWrite } from '../ports/documentStore.ts'
import type { RecordedEvent } from '../ports/eventStore.ts'

type Revisioned = Doc & { revision: number }

export interface DocumentEvolution<T extends Revisioned> {
  /** The `_id` of the document `event` is about; null when it is about none of this collection. */
  idOf(event: RecordedEvent): string | null
  /** The document `event` brings into being (inserted unless one exists), or null for any other event. */
  created(event: RecordedEvent): T | null
  /**
   * The document after `event`: `doc` itself when the event changes nothing (an old event re-applied,
   * an event type it ignores), a new object when it changes it, null when it deletes it. May write
   * other collections on the way (they are written at once, in log order).
   */
  evolve(doc: T | null, event: RecordedEvent): Promise<T | null>
  /**
   * Writes what `evolve` gathered that must land before the documents (a ledger's entries before
   * the balance that counts them: re-applied after a crash between the two, the balance's
   * revision would skip the events and the entries would be lost). Called once per pass.
   */
  beforeWrite?(): Promise<void>
}

/** Applies `events` to the documents of `col` as `how` says: one read, one guarded write. */
export async function applyBatched<T extends Revisioned>(col: Collection<T>, events: readonly RecordedEvent[], how: DocumentEvolution<T>): Promise<void> {
  let mustRead = new Set<string>()
  let pending: readonly RecordedEvent[] = events
  // A second pass only for documents whose insert collided; a third would need a document deleted
  // and created again between two reads, which a stream (created once) never is.
  for (let pass = 0; pending.length > 0 && pass < 3; pass++) {
    const collided = await applyOnce(col, pending, how, mustRead)
    mustRead = collided
    pending = collided.size === 0 ? [] : events.filter((e) => collided.has(how.idOf(e) ?? ''))
  }
}

async function applyOnce<T extends Revisioned>(col: Collection<T>, events: readonly RecordedEvent[], how: DocumentEvolution<T>, mustRead: ReadonlySet<string>): Promise<Set<string>> {
  // What was stored when read (null: nothing), for the documents read; a document the batch
  // creates without reading has no entry.
  const stored = new Map<string, T | null>()
  const current = new Map<string, T | null>()
  const toRead = new Set<string>()
  const createdHere = new Set<string>()
  for (const e of events) {
    const id = how.idOf(e)
    if (id === null || createdHere.has(id) || toRead.has(id)) continue
    if (!mustRead.has(id) && how.created(e) !== null) createdHere.add(id)
    else toRead.add(id)
  }
  if (toRead.size > 0) {
    for (const id of toRead) stored.set(id, null)
    for (const doc of await col.find({ _id: { $in: [...toRead] } })) stored.set(doc._id, doc)
    for (const [id, doc] of stored) current.set(id, doc)
  }
  for (const e of events) {
    const id = how.idOf(e)
    if (id === null) continue
    const doc = current.get(id) ?? null
    const created = how.created(e)
    if (created !== null) {
      // Insert if absent: only where nothing is stored (read, or known from this batch).
      if (!current.has(id) || (doc === null && stored.get(id) === null)) current.set(id, created)
      continue
    }
    current.set(id, await how.evolve(doc, e))
  }
  await how.beforeWrite?.()
  const writes: GuardedWrite<T>[] = []
  const ids: string[] = []
  for (const [id, next] of current) {
    const before = stored.get(id) ?? null
    if (next === before) continue
    ids.push(id)
    if (next === null) writes.push({ delete: { _id: id } })
    else if (before === null) writes.push({ insert: next })
    else writes.push({ replace: next, filter: { _id: id, revision: before.revision } })
  }
  if (writes.length === 0) return new Set()
  const { collided } = await col.writeGuarded(writes)
  return new Set(collided.map((i) => ids[i]!))
}
