// Embedded event store: one SQLite file in WAL mode, every commit fsynced. Appends take the
// write lock (BEGIN IMMEDIATE), so positions are assigned in commit order even when several
// processes share the file, and the (stream, revision) key enforces optimistic concurrency.
// Concurrent appends share a commit (group commit, see `flush`).
import { EventEmitter } from 'node:events'
import { BUSY_TIMEOUT_MS, immediateTransaction, isBusy, openSqlite, type SqliteDatabase } from './database.ts'
import {
  EventStoreTimeoutError,
  START,
  WrongExpectedRevisionError,
  categoryOf,
  type AppendResult,
  type EventFilter,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type GlobalPosition,
  type ReadAllOptions,
  type ReadStreamResult,
  type RecordedEvent,
  type SubscribeOptions,
} from '../../ports/eventStore.ts'

// Schema version 2 (PRAGMA user_version). `body` holds the whole event as JSON, less its
// global position (the rowid), built once at append time: a reader takes 2 columns per row out of
// SQLite and parses one JSON text, which is what makes a full replay fast (libsql's cost per
// column and per row dominated with one column per field; see bench/README.md). The other
// columns are only there for lookups, filters and constraints.
const SCHEMA_VERSION = 2
const TABLE = (name: string) => `
CREATE TABLE ${name} (
  position    INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT    NOT NULL UNIQUE,
  stream      TEXT    NOT NULL,
  category    TEXT    NOT NULL,
  revision    INTEGER NOT NULL,
  type        TEXT    NOT NULL,
  body        TEXT    NOT NULL,
  UNIQUE (stream, revision)
);`
const INDEXES = `
CREATE INDEX events_by_category ON events (category, position);
CREATE INDEX events_by_type ON events (type, position);
`

/** Creates the schema, or brings a file written by an older version up to date, once. */
function migrate(db: SqliteDatabase): void {
  const version = () => (db.prepare('PRAGMA user_version').raw(true).get() as [number])[0]
  if (version() === SCHEMA_VERSION) return
  immediateTransaction(db, () => {
    // Checked again under the write lock: another process may have migrated meanwhile.
    const v = version()
    if (v === SCHEMA_VERSION) return
    if (v > SCHEMA_VERSION) throw new Error(`events file has schema version ${v}; this code knows up to ${SCHEMA_VERSION}`)
    const hasEvents = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get() !== undefined
    if (!hasEvents) {
      db.exec(TABLE('events') + INDEXES)
    } else {
      // Version 1: data, metadata (null when empty) and recorded_at in columns of their own.
      const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").raw(true).get() as [number] | undefined
      db.exec(`${TABLE('events_v2')}
        INSERT INTO events_v2 (position, id, stream, category, revision, type, body)
          SELECT position, id, stream, category, revision, type,
                 json_object('id', id, 'streamName', stream, 'revision', revision, 'type', type,
                             'data', json(data), 'metadata', json(coalesce(metadata, '{}')), 'recordedAt', recorded_at)
          FROM events ORDER BY position;
        DROP TABLE events;
        ALTER TABLE events_v2 RENAME TO events;
        ${INDEXES}`)
      // Positions are never reused, even those of appends that were rolled back.
      if (seq) db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'").run(seq[0])
    }
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`)
  })
}

type Row = [position: number, body: string]
const COLUMNS = 'position, body'

const toEvent = (r: Row): RecordedEvent => {
  const event = JSON.parse(r[1]) as RecordedEvent
  event.globalPosition = r[0]
  return event
}

interface PendingAppend {
  streamName: string
  events: EventToAppend[]
  expected: ExpectedRevision
  resolve(result: AppendResult): void
  reject(error: unknown): void
}

export interface SqliteEventStoreOptions {
  path: string
  /** How often a subscription looks for appends made by other processes. */
  pollIntervalMs?: number
  /** How long an append waits for another process's write lock (default BUSY_TIMEOUT_MS). */
  busyTimeoutMs?: number
}

/**
 * `error`, or the event store's "did not answer" when SQLite gave up waiting for another process's
 * lock: on a loaded machine the roles sharing the file can hold it past the busy timeout, and
 * that is the store unavailable for a moment (503, retry), not a fault of the request (500).
 */
const unanswered = (operation: string, waitedMs: number, error: unknown): unknown =>
  isBusy(error) ? Object.assign(new EventStoreTimeoutError(operation, waitedMs), { cause: error }) : error

type ReadStreamOptions = NonNullable<Parameters<EventStore['readStream']>[1]>

export function openSqliteEventStore({ path, pollIntervalMs = 50, busyTimeoutMs = BUSY_TIMEOUT_MS }: SqliteEventStoreOptions): EventStore {
  const db = openSqlite(path, { synchronous: 'FULL', busyTimeoutMs })
  migrate(db)
  return new SqliteEventStore(db, pollIntervalMs, busyTimeoutMs)
}

class SqliteEventStore implements EventStore {
  // Wakes this process's subscriptions at once; other processes' appends are found by polling.
  private readonly appended = new EventEmitter().setMaxListeners(0)
  private readonly stmts
  private readonly readAllStatements = new Map<string, { all(...params: unknown[]): unknown[] }>()
  private pending: PendingAppend[] = []
  private closed = false

  constructor(
    private readonly db: SqliteDatabase,
    private readonly pollIntervalMs: number,
    private readonly busyTimeoutMs: number,
  ) {
    this.stmts = {
      byId: db.prepare('SELECT stream, revision, position FROM events WHERE id = ?').raw(true),
      currentRevision: db.prepare('SELECT max(revision) FROM events WHERE stream = ?').raw(true),
      insert: db.prepare('INSERT INTO events (id, stream, category, revision, type, body) VALUES (?, ?, ?, ?, ?, ?)'),
      readStream: db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`).raw(true),
    }
  }

  appendToStream(
    streamName: string,
    events: EventToAppend[],
    { expectedRevision = 'any' }: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    try {
      this.assertOpen()
      if (events.length === 0) throw new Error('appendToStream needs at least one event')
    } catch (err) {
      return Promise.reject(err)
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ streamName, events, expected: expectedRevision, resolve, reject })
      if (this.pending.length === 1) setImmediate(() => this.flush())
    })
  }

  /**
   * Group commit: every append requested during one turn of the event loop goes into one
   * transaction, each under its own savepoint (so one refused append does not undo the others),
   * and one fsync makes them all durable. Each caller learns its own outcome only after the
   * commit, exactly as if it had committed alone.
   */
  private flush() {
    const batch = this.pending
    this.pending = []
    if (batch.length === 0) return
    const outcomes: ({ ok: true; result: AppendResult } | { ok: false; error: unknown })[] = []
    if (batch.length === 1) {
      // Alone in its commit: no savepoint needed, a refusal rolls back only this append.
      const a = batch[0]!
      let result: AppendResult
      try {
        result = immediateTransaction(this.db, () => this.appendLocked(a.streamName, a.events, a.expected))
      } catch (error) {
        return a.reject(unanswered('append', this.busyTimeoutMs, error))
      }
      this.appended.emit('append')
      return a.resolve(result)
    }
    try {
      immediateTransaction(this.db, () => {
        for (const a of batch) {
          this.db.exec('SAVEPOINT append')
          try {
            outcomes.push({ ok: true, result: this.appendLocked(a.streamName, a.events, a.expected) })
            this.db.exec('RELEASE append')
          } catch (error) {
            this.db.exec('ROLLBACK TO append')
            this.db.exec('RELEASE append')
            outcomes.push({ ok: false, error })
          }
        }
      })
    } catch (error) {
      // The commit itself failed: nothing of the batch is stored.
      for (const a of batch) a.reject(unanswered('append', this.busyTimeoutMs, error))
      return
    }
    this.appended.emit('append')
    batch.forEach((a, i) => {
      const o = outcomes[i]!
      if (o.ok) a.resolve(o.result)
      else a.reject(o.error)
    })
  }

  private appendLocked(streamName: string, events: EventToAppend[], expected: ExpectedRevision): AppendResult {
    const stored = events.map((e) => this.stmts.byId.get(e.id) as [string, number, number] | undefined)
    if (stored.every((s) => s !== undefined)) {
      // A retried batch: report where it landed the first time.
      const last = stored[stored.length - 1]!
      return { nextExpectedRevision: last[1], lastGlobalPosition: last[2] }
    }
    const current = this.currentRevision(streamName)
    // Like EventStoreDB, a batch that is only partly stored is not a retry but a conflict.
    if (stored.some((s) => s !== undefined)) throw new WrongExpectedRevisionError(streamName, expected, current)
    if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(streamName, expected, current)

    const category = categoryOf(streamName)
    const recordedAt = new Date().toISOString()
    let revision = current
    let lastPosition = 0
    events.forEach((e) => {
      revision += 1
      const body = JSON.stringify({ id: e.id, streamName, revision, type: e.type, data: e.data, metadata: e.metadata ?? {}, recordedAt })
      const info = this.stmts.insert.run(e.id, streamName, category, revision, e.type, body)
      lastPosition = Number(info.lastInsertRowid)
    })
    return { nextExpectedRevision: revision, lastGlobalPosition: lastPosition }
  }

  private currentRevision(streamName: string): number {
    const row = this.stmts.currentRevision.get(streamName) as [number | null]
    return row[0] ?? -1
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<ReadStreamResult> {
    this.assertOpen()
    try {
      return this.readStreamSync(streamName, options)
    } catch (error) {
      throw unanswered('readStream', this.busyTimeoutMs, error)
    }
  }

  private readStreamSync(streamName: string, { from = 0, maxCount = Number.MAX_SAFE_INTEGER }: ReadStreamOptions): ReadStreamResult {
    const current = this.currentRevision(streamName)
    if (current === -1) return { events: [], currentRevision: -1, streamExists: false }
    // Nothing from `from` on (a command handler's cached state is current): no second query.
    if (current < from) return { events: [], currentRevision: current, streamExists: true }
    const rows = this.stmts.readStream.all(streamName, from, maxCount) as Row[]
    return { events: rows.map(toEvent), currentRevision: current, streamExists: true }
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen()
    return this.readAllSync(options)
  }

  private readAllSync({ after = START, maxCount = 4096, filter }: ReadAllOptions): RecordedEvent[] {
    const { sql, params } = readAllQuery(after, maxCount, filter)
    try {
      let stmt = this.readAllStatements.get(sql)
      if (!stmt) this.readAllStatements.set(sql, (stmt = this.db.prepare(sql).raw(true)))
      return (stmt.all(...params) as Row[]).map(toEvent)
    } catch (error) {
      throw unanswered('readAll', this.busyTimeoutMs, error)
    }
  }

  async *subscribeToAll({ after = START, filter, signal, batchSize = 1000 }: SubscribeOptions = {}): AsyncGenerator<RecordedEvent> {
    let position = after
    while (!signal?.aborted && !this.closed) {
      const batch = this.readAllSync({ after: position, maxCount: batchSize, filter })
      for (const event of batch) {
        if (signal?.aborted) return
        yield event
        position = event.globalPosition
      }
      if (batch.length < batchSize) await this.nextAppend(signal)
    }
  }

  private nextAppend(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.appended.off('append', done)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, this.pollIntervalMs)
      this.appended.once('append', done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    // Appends already accepted are committed, not dropped.
    this.flush()
    this.closed = true
    this.appended.emit('append')
    this.db.close()
  }

  private assertOpen() {
    if (this.closed) throw new Error('event store is closed')
  }
}

function revisionMatches(expected: ExpectedRevision, current: number): boolean {
  switch (expected) {
    case 'any':
      return true
    case 'no_stream':
      return current === -1
    case 'stream_exists':
      return current !== -1
    default:
      return expected === current
  }
}

function readAllQuery(after: GlobalPosition, maxCount: number, filter?: EventFilter) {
  const where = ['position > ?']
  const params: (string | number)[] = [after]
  if (filter?.categories) {
    where.push(`category IN (${filter.categories.map(() => '?').join(', ')})`)
    params.push(...filter.categories)
  }
  if (filter?.eventTypes) {
    where.push(`type IN (${filter.eventTypes.map(() => '?').join(', ')})`)
    params.push(...filter.eventTypes)
  }
  params.push(maxCount)
  return { sql: `SELECT ${COLUMNS} FROM events WHERE ${where.join(' AND ')} ORDER BY position LIMIT ?`, params }
}
