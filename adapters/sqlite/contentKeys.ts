// Content keys (ports/contentKeys.ts) in a SQLite file of their own, `DATA_DIR/keys.db`, apart
// from the event log, so backing up or shipping the log never ships the keys. `secure_delete`
// overwrites a destroyed key's bytes in the file, and a TRUNCATE checkpoint after each shred
// empties the write-ahead log that still held the page with the key.
import { randomBytes, randomUUID } from 'node:crypto'
import { immediateTransaction, isBusy, openSqlite } from './database.ts'
import { DocumentStoreUnavailableError } from '../../ports/documentStore.ts'
import type { ContentKey, ContentKeyStore } from '../../ports/contentKeys.ts'

/** Keys made ahead for `issueId`: a new batch in one transaction when fewer than POOL_LOW are left. */
const POOL_BATCH = 256
const POOL_LOW = 64

const SCHEMA = `CREATE TABLE IF NOT EXISTS content_keys (id TEXT PRIMARY KEY, key BLOB, shredded_at TEXT) WITHOUT ROWID;`

/** Another process held the write lock past the busy timeout: the store did not answer (503, retry), not a fault of the request. */
const unanswered = (err: unknown): unknown =>
  isBusy(err) ? new DocumentStoreUnavailableError(`the content-key store is locked by another process: ${(err as Error).message}`, { cause: err }) : err

/** `fn`, with SQLite's "busy" as the store not answering. */
function answered<T>(fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    throw unanswered(err)
  }
}

export function openSqliteContentKeys({ path, busyTimeoutMs }: { path: string; busyTimeoutMs?: number }): ContentKeyStore {
  const db = openSqlite(path, { synchronous: 'FULL', busyTimeoutMs })
  db.exec('PRAGMA secure_delete = ON')
  db.exec(SCHEMA)
  const select = db.prepare('SELECT key, shredded_at FROM content_keys WHERE id = ?')
  const insert = db.prepare('INSERT OR IGNORE INTO content_keys (id, key, shredded_at) VALUES (?, ?, NULL)')
  const shred = db.prepare('INSERT INTO content_keys (id, key, shredded_at) VALUES (?, NULL, ?) ON CONFLICT (id) DO UPDATE SET key = NULL, shredded_at = excluded.shredded_at')
  const read = (id: string): ContentKey => {
    const row = select.get(id) as { key: Buffer | null; shredded_at: string | null } | undefined
    if (!row) return { kind: 'none' }
    if (row.shredded_at || !row.key) return { kind: 'shredded' }
    return { kind: 'key', key: Buffer.from(row.key) }
  }
  // Group commit, as in the event store: the new keys asked for during one turn of the event loop
  // are inserted in one transaction, one fsync for all. Each was a commit (an fsync holding the
  // only thread) of its own, the largest cost of a note's create in the scale benchmark.
  let pending: { id: string; resolve: (k: ContentKey) => void; reject: (err: unknown) => void }[] = []
  const flush = () => {
    const batch = pending
    pending = []
    try {
      // Two processes creating the first key of one note: the first insert wins, both read it.
      immediateTransaction(db, () => {
        for (const p of batch) insert.run(p.id, randomBytes(32))
      })
    } catch (err) {
      const error = unanswered(err)
      for (const p of batch) p.reject(error)
      return
    }
    for (const p of batch) p.resolve(read(p.id))
  }
  // Ids with keys made ahead, handed out by `issueId`. Random ids, so processes sharing the file
  // never hand out the same one. A process killed with ids left here leaves their keys behind:
  // keys of notes that never existed, which nothing reads (at most POOL_BATCH + POOL_LOW).
  const pool: { id: string; key: Buffer }[] = []
  // The key of an id just handed out, for its note's first event: only the caller knows the id
  // until that event is written, so no other process can have destroyed the key meanwhile and
  // the stored row need not be read. Bounded: a create refused after `issueId` never asks.
  const issued = new Map<string, Buffer>()
  let refilling: Promise<void> | null = null
  const refill = (): Promise<void> =>
    (refilling ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => {
        const made = Array.from({ length: POOL_BATCH }, () => ({ id: randomUUID(), key: randomBytes(32) }))
        answered(() =>
          immediateTransaction(db, () => {
            for (const m of made) insert.run(m.id, m.key)
          }),
        )
        pool.push(...made)
      })
      .finally(() => {
        refilling = null
      }))
  const remove = db.prepare('DELETE FROM content_keys WHERE id = ?')
  return {
    async issueId() {
      while (pool.length === 0) await refill()
      const { id, key } = pool.pop()!
      // A failed refill in the background is not lost: the next call that finds the pool empty
      // runs one itself and gets its error.
      if (pool.length < POOL_LOW) refill().catch(() => {})
      if (issued.size >= POOL_BATCH) issued.delete(issued.keys().next().value!)
      issued.set(id, key)
      return id
    },
    async key(id, { create }) {
      const fresh = issued.get(id)
      if (fresh) {
        issued.delete(id)
        return { kind: 'key', key: fresh }
      }
      const found = read(id)
      if (found.kind !== 'none' || !create) return found
      return new Promise<ContentKey>((resolve, reject) => {
        pending.push({ id, resolve, reject })
        if (pending.length === 1) setImmediate(flush)
      })
    },
    async shred(id) {
      issued.delete(id)
      // Inside a transaction: a lock not had fails at BEGIN. A statement that itself failed on the
      // lock stays "in progress" in libsql, and every later commit of this connection failed.
      answered(() => immediateTransaction(db, () => shred.run(id, new Date().toISOString())))
      // Readers in other processes can hold the log back; a few tries, then the next shred retries.
      for (let i = 0; i < 20; i++) {
        const r = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number } | undefined
        if (!r || r.busy === 0) break
        await new Promise((res) => setTimeout(res, 25))
      }
    },
    async close() {
      if (pending.length > 0) flush()
      await refilling?.catch(() => {})
      // The ids never handed out name no note: their keys go with the process.
      immediateTransaction(db, () => {
        for (const { id } of pool.splice(0)) remove.run(id)
      })
      db.close()
    },
  }
}

/** Every row of a keys file, for carrying it into the shared key store (app/infrastructure.ts); the file is only read. */
export function readSqliteContentKeys(path: string): { id: string; key: Buffer | null; shreddedAt: string | null }[] {
  const db = openSqlite(path, { synchronous: 'FULL' })
  try {
    db.exec(SCHEMA)
    const rows = db.prepare('SELECT id, key, shredded_at FROM content_keys').all() as { id: string; key: Buffer | null; shredded_at: string | null }[]
    return rows.map((r) => ({ id: r.id, key: r.key ? Buffer.from(r.key) : null, shreddedAt: r.shredded_at }))
  } finally {
    db.close()
  }
}
