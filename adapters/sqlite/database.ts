// The one place that opens SQLite files. `libsql` is used because it ships prebuilt binaries as
// registry packages (no compile step, no download at install time) and has a synchronous,
// better-sqlite3-compatible API.
import Database from 'libsql'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'

export type SqliteDatabase = InstanceType<typeof Database>

/** How long a connection waits for another's lock before SQLite gives up with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000

/** SQLite gave up waiting for another connection's lock (SQLITE_BUSY and its extended codes). */
export const isBusy = (err: unknown): boolean => String((err as { code?: unknown } | null)?.code ?? '').startsWith('SQLITE_BUSY')

export interface OpenOptions {
  /** `FULL` makes every commit durable (fsync); `NORMAL` survives a process crash, not power loss. */
  synchronous: 'FULL' | 'NORMAL'
  /** Default BUSY_TIMEOUT_MS. */
  busyTimeoutMs?: number
}

export function openSqlite(path: string, { synchronous, busyTimeoutMs = BUSY_TIMEOUT_MS }: OpenOptions): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  // Several processes (API, workers, projections) may share one file: wait for the write lock
  // instead of failing at once. First: switching to WAL (and recovering a WAL another process
  // left) takes a lock too, and without a timeout two roles starting at once failed with
  // SQLITE_BUSY_RECOVERY (issue 31).
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.round(busyTimeoutMs))}`)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec(`PRAGMA synchronous = ${synchronous}`)
  return db
}

/** Runs `fn` inside BEGIN IMMEDIATE so the write lock is taken before anything is read. */
export function immediateTransaction<T>(db: SqliteDatabase, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE')
  try {
    const result = fn()
    db.exec('COMMIT')
    return result
  } catch (err) {
    db.exec('ROLLBACK')
    throw err
  }
}
