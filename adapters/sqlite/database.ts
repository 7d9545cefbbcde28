// The one place that opens SQLite files. `libsql` is used because it ships prebuilt binaries as
// registry packages (no compile step, no download at install time) and has a synchronous,
// better-sqlite3-compatible API.
import Database from 'libsql'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'

export type SqliteDatabase = InstanceType<typeof Database>

export interface OpenOptions {
  /** `FULL` makes every commit durable (fsync); `NORMAL` survives a process crash, not power loss. */
  synchronous: 'FULL' | 'NORMAL'
}

export function openSqlite(path: string, { synchronous }: OpenOptions): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  // Several processes (API, workers, projections) may share one file: wait for the write lock
  // instead of failing at once. First: switching to WAL (and recovering a WAL another process
  // left) takes a lock too, and without a timeout two roles starting at once failed with
  // SQLITE_BUSY_RECOVERY (issue 31).
  db.exec('PRAGMA busy_timeout = 10000')
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
