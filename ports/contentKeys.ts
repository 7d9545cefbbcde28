// Per-note content keys for crypto-shredding: the content of a note's events is encrypted with a
// key of its own, kept OUTSIDE the event log; deleting the note destroys the key, and with it
// every copy of that content the log (and its backups, replicas, forwarded copies of the
// ciphertext) still holds. A destroyed key is remembered (a tombstone), so nothing is encrypted
// with a fresh key for a deleted note by a process that has not heard of the deletion.

export type ContentKey = { kind: 'key'; key: Buffer } | { kind: 'shredded' } | { kind: 'none' }

export interface ContentKeyStore {
  /** The key of `id`; with `create`, a new one when there is none yet (never for a shredded id). */
  key(id: string, options: { create: boolean }): Promise<ContentKey>
  /**
   * A new random id whose key is already stored, for a note the caller is about to create: keys
   * are made ahead, many in one durable write, so a note's first event waits on one durable
   * write (its own) rather than two in a row. An id handed out is never handed out again.
   */
  issueId(): Promise<string>
  /** Destroys the key of `id` for good (idempotent) and leaves a tombstone. */
  shred(id: string): Promise<void>
  close(): Promise<void>
}
