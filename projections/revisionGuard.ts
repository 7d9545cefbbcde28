// Writes guarded by the revision read. A projection reads a document, computes the next state
// from it and the event, and writes it back. Two instances may do that at once (a rolling
// deploy, a lease taken over from a holder that was only slow, projections/lease.ts): the late
// one read an older state, and its write would put that older state back over a newer one. So
// every such write carries what was read in its filter (compare-and-set): the document at the
// revision read, or no document at all (an insert). MongoDB applies filter and update atomically;
// a write that matches nothing was late and is dropped, since the newer writer already applied
// the event or a later one. Each helper answers whether the write landed.
import { DuplicateKeyError, type Collection, type Doc, type Filter, type Update } from '../ports/documentStore.ts'

type Revisioned = Doc & { revision?: number }

/** The filter that matches `read` only while it is still at the revision it was read at. */
export const atRevisionRead = (read: Revisioned): Filter => ({ _id: read._id, revision: read.revision === undefined ? { $exists: false } : read.revision })

/** Inserts `doc` unless a document with its `_id` exists (then whoever wrote it first wins). */
export async function insertIfAbsent<T extends Doc>(col: Collection<T>, doc: T): Promise<boolean> {
  try {
    await col.insertOne(doc)
    return true
  } catch (err) {
    if (err instanceof DuplicateKeyError) return false
    throw err
  }
}

/** Writes `next` where `read` was: replaces it if it is still at its revision; inserts when nothing was read. */
export async function replaceRead<T extends Revisioned>(col: Collection<T>, read: T | null, next: T): Promise<boolean> {
  if (!read) return insertIfAbsent(col, next)
  return (await col.replaceOne(atRevisionRead(read), next)).matchedCount > 0
}

/** Applies `update` to `read` if it is still at the revision read. */
export async function updateRead<T extends Revisioned>(col: Collection<T>, read: T, update: Update): Promise<boolean> {
  return (await col.updateOne(atRevisionRead(read), update)).matchedCount > 0
}

/**
 * Replaces the document with `doc` if the stored one is older than `doc.revision` (or inserts
 * it): for documents computed from the event alone, not from a read (a transcript, a timeline).
 */
export async function replaceIfNewer<T extends Doc & { revision: number }>(col: Collection<T>, doc: T): Promise<boolean> {
  if ((await col.replaceOne({ _id: doc._id, revision: { $lt: doc.revision } }, doc)).matchedCount > 0) return true
  return insertIfAbsent(col, doc)
}
