// The embedded read-model store: MongoDB semantics (./query.ts) over documents held in memory
// and written through to a SQLite file, so read models survive restarts and queries are as fast
// as a map lookup or an index walk. One process owns the file for writing (the service); other
// processes (the auditor) may open it to read.
import { randomUUID } from 'node:crypto'
import { openSqlite, type SqliteDatabase } from '../sqlite/database.ts'
import { SortedIndex } from './sortedIndex.ts'
import { applyUpdate, cloneJson, deepEqual, equalityBindings, matches, projectCopy, seedFromFilter, sortComparator } from './query.ts'
import {
  DuplicateKeyError,
  type Collection,
  type Doc,
  type DocumentStore,
  type Filter,
  type FindOptions,
  type GuardedWrite,
  type GuardedWriteResult,
  type IndexSpec,
  type SortSpec,
  type Update,
  type UpdateResult,
} from '../../ports/documentStore.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS documents (collection TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS indexes (collection TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, PRIMARY KEY (collection, name)) WITHOUT ROWID;
`

export function openEmbeddedDocumentStore({ path }: { path: string }): DocumentStore {
  // Read models can always be rebuilt from the event log, so commits skip the fsync; WAL keeps
  // them in order, so a crash loses a tail of writes together with their checkpoint.
  const db = openSqlite(path, { synchronous: 'NORMAL' })
  // A deleted document's bytes are overwritten in the file, not left in free pages (note deletion).
  db.exec('PRAGMA secure_delete = ON')
  db.exec(SCHEMA)
  return new EmbeddedDocumentStore(db)
}

/**
 * One `writeBatch` call. Its writes run inside one SQLite transaction, opened at its first write
 * (so a batch that first waits on something slow, like a broker, holds no lock meanwhile) and
 * committed when `fn` resolves. Until then it remembers how to undo them in memory.
 */
class Batch {
  open = true
  release: () => void = () => {}
  /** Per collection, the version of each document before the batch first wrote it (null: absent). */
  readonly before = new Map<CollectionState<Doc>, Map<string, Doc | null>>()
  readonly newIndexes = new Map<CollectionState<Doc>, string[]>()
  /** Collections the batch dropped: cheaper to reload after the rollback than to undo doc by doc. */
  readonly dropped = new Set<CollectionState<Doc>>()
  readonly views = new Map<string, EmbeddedCollection<Doc>>()

  remember(c: CollectionState<Doc>, id: string, doc: Doc | null): void {
    let m = this.before.get(c)
    if (!m) this.before.set(c, (m = new Map()))
    if (!m.has(id)) m.set(id, doc)
  }

  /** Puts memory back as it was before the batch (SQLite has been rolled back already). */
  undo(): void {
    for (const c of this.dropped) c.reload()
    for (const [c, names] of this.newIndexes) if (!this.dropped.has(c)) for (const n of names) c.indexes.delete(n)
    for (const [c, docs] of this.before) if (!this.dropped.has(c)) c.restore(docs)
  }
}

class EmbeddedDocumentStore implements DocumentStore {
  readonly atomicWriteBatches = true
  private readonly states = new Map<string, CollectionState<Doc>>()
  private readonly views = new Map<string, EmbeddedCollection<Doc>>()
  /**
   * The batch holding the connection's open transaction. Every other write waits until it ends:
   * SQLite has one transaction per connection, so a write issued meanwhile would silently join
   * the batch and be rolled back with it. (A second connection would not help: its write would
   * block on SQLite's lock synchronously, i.e. block the event loop the batch needs to finish.)
   */
  private writer: Batch | null = null
  private writerDone: Promise<void> = Promise.resolve()

  constructor(private readonly db: SqliteDatabase) {}

  private state(name: string): CollectionState<Doc> {
    let s = this.states.get(name)
    if (!s) this.states.set(name, (s = new CollectionState(name, this.db)))
    return s
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    let c = this.views.get(name)
    if (!c) this.views.set(name, (c = new EmbeddedCollection(this.state(name), this, null)))
    return c as unknown as Collection<T>
  }

  private batchView(batch: Batch): DocumentStore {
    const view: DocumentStore = {
      atomicWriteBatches: true,
      collection: <T extends Doc = Doc>(name: string): Collection<T> => {
        let c = batch.views.get(name)
        if (!c) batch.views.set(name, (c = new EmbeddedCollection(this.state(name), this, batch)))
        return c as unknown as Collection<T>
      },
      // Nested batches join the enclosing one.
      writeBatch: (fn) => fn(view),
      close: async () => {
        throw new Error('close the document store, not a write batch')
      },
    }
    return view
  }

  async writeBatch<R>(fn: (batch: DocumentStore) => Promise<R>): Promise<R> {
    const batch = new Batch()
    try {
      const result = await fn(this.batchView(batch))
      if (this.writer === batch) this.db.exec('COMMIT')
      return result
    } catch (err) {
      if (this.writer === batch) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK')
        batch.undo()
      }
      throw err
    } finally {
      batch.open = false
      if (this.writer === batch) {
        this.writer = null
        batch.release()
      }
    }
  }

  /**
   * Null when a write of `batch` (null: a write of its own) may run now, and then the batch owns
   * the connection's transaction; otherwise a promise to wait on before asking again. Callers
   * ask and write in the same synchronous stretch, so no batch can begin in between.
   */
  writeGate(batch: Batch | null): Promise<void> | null {
    if (batch && !batch.open) throw new Error('this write batch has ended; write through the document store')
    if (this.writer === batch) return null
    if (this.writer) return this.writerDone
    if (batch) {
      this.db.exec('BEGIN IMMEDIATE')
      this.writer = batch
      this.writerDone = new Promise((resolve) => (batch.release = resolve))
    }
    return null
  }

  /**
   * Empties the write-ahead log, which still holds earlier versions of pages (a deleted note's
   * transcript among them) until a checkpoint: TRUNCATE copies the live pages back into the file
   * (where `secure_delete` zeroed what was deleted) and cuts the log to nothing.
   */
  async eraseFreedSpace(): Promise<void> {
    for (let i = 0; i < 40; i++) {
      while (this.writer) await this.writerDone
      const r = this.db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number } | undefined
      if (!r || r.busy === 0) return
      await new Promise((res) => setTimeout(res, 25))
    }
  }

  async close(): Promise<void> {
    this.db.close()
  }
}

/** One collection's documents and indexes, shared by every view of it (the store's, each batch's). */
class CollectionState<T extends Doc> {
  readonly docs = new Map<string, T>()
  readonly indexes = new Map<string, SortedIndex>()
  readonly stmts

  constructor(
    readonly name: string,
    private readonly db: SqliteDatabase,
  ) {
    this.stmts = {
      upsert: db.prepare('INSERT INTO documents (collection, id, body) VALUES (?, ?, ?) ON CONFLICT (collection, id) DO UPDATE SET body = excluded.body'),
      delete: db.prepare('DELETE FROM documents WHERE collection = ? AND id = ?'),
      deleteAll: db.prepare('DELETE FROM documents WHERE collection = ?'),
      saveIndex: db.prepare('INSERT OR REPLACE INTO indexes (collection, name, spec) VALUES (?, ?, ?)'),
      load: db.prepare('SELECT body FROM documents WHERE collection = ?').raw(true),
      loadIndexes: db.prepare('SELECT spec FROM indexes WHERE collection = ?').raw(true),
    }
    this.reload()
  }

  /** Replaces memory by what the file holds. */
  reload(): void {
    this.docs.clear()
    this.indexes.clear()
    for (const [body] of this.stmts.load.all(this.name) as [string][]) {
      const doc = JSON.parse(body) as T
      this.docs.set(doc._id, doc)
    }
    for (const [spec] of this.stmts.loadIndexes.all(this.name) as [string][]) this.addIndex(JSON.parse(spec) as IndexSpec)
  }

  addIndex(spec: IndexSpec): SortedIndex {
    const index = new SortedIndex(spec)
    for (const d of this.docs.values()) {
      if (index.conflict(d)) throw new DuplicateKeyError(this.name, index.keyOf(d))
      index.insert(d)
    }
    this.indexes.set(index.name, index)
    return index
  }

  /** Puts back the given versions of documents (null: absent), in memory and indexes. */
  restore(versions: Map<string, T | null>): void {
    for (const id of versions.keys()) {
      const current = this.docs.get(id)
      if (!current) continue
      for (const index of this.indexes.values()) index.remove(current)
      this.docs.delete(id)
    }
    for (const doc of versions.values()) {
      if (!doc) continue
      for (const index of this.indexes.values()) index.insert(doc)
      this.docs.set(doc._id, doc)
    }
  }
}

class EmbeddedCollection<T extends Doc> implements Collection<T> {
  private readonly docs: Map<string, T>
  private readonly indexes: Map<string, SortedIndex>
  private readonly stmts: CollectionState<T>['stmts']
  readonly name: string

  constructor(
    private readonly state: CollectionState<T>,
    private readonly store: EmbeddedDocumentStore,
    /** The write batch this view belongs to; null for the store's own view. */
    private readonly batch: Batch | null,
  ) {
    this.name = state.name
    this.docs = state.docs
    this.indexes = state.indexes
    this.stmts = state.stmts
  }

  // ---- reads ----

  async findOne(filter: Filter, options: Omit<FindOptions, 'limit'> = {}): Promise<T | null> {
    return this.query(filter, { ...options, limit: 1 })[0] ?? null
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    return this.query(filter, options)
  }

  async countDocuments(filter: Filter = {}): Promise<number> {
    let n = 0
    for (const d of this.candidates(filter)) if (matches(d, filter)) n++
    return n
  }

  private query(filter: Filter, { sort, limit = Infinity, skip = 0, projection }: FindOptions): T[] {
    const sortKeys = sort && Object.keys(sort).length > 0 ? sort : undefined
    const plan = this.plan(filter, sortKeys)
    const out: T[] = []
    if (plan?.ordered || !sortKeys) {
      // Documents come out already in order: stop as soon as the page is full.
      let skipped = 0
      for (const d of plan ? this.byIds(plan.index.scan(plan.bound, plan.prefix, plan.reverse)) : this.candidates(filter)) {
        if (!matches(d, filter)) continue
        if (skipped++ < skip) continue
        out.push(d)
        if (out.length >= limit) break
      }
      return out.map((d) => projectCopy(d, projection))
    }
    for (const d of plan ? this.byIds(plan.index.scan(plan.bound, plan.prefix, false)) : this.candidates(filter)) if (matches(d, filter)) out.push(d)
    out.sort(sortComparator(sortKeys))
    return out.slice(skip, skip + limit).map((d) => projectCopy(d, projection))
  }

  private *byIds(ids: Iterable<string>): Generator<T> {
    for (const id of ids) {
      const d = this.docs.get(id)
      if (d) yield d
    }
  }

  /** Documents that may match: one by `_id`, those of an `_id` $in list (a projection batch's read), or all of them. */
  private candidates(filter: Filter): Iterable<T> {
    const id = filter._id
    if (typeof id === 'string') {
      const d = this.docs.get(id)
      return d ? [d] : []
    }
    const listed = idsIn(id)
    if (listed) return this.byIds(new Set(listed))
    return this.docs.values()
  }

  /** Picks the index binding the most leading fields by equality, or one delivering the sort. */
  private plan(filter: Filter, sort: SortSpec | undefined) {
    if (typeof filter._id === 'string' || idsIn(filter._id)) return null
    const bound = equalityBindings(filter)
    let best: { index: SortedIndex; bound: Map<string, unknown>; prefix: number; ordered: boolean; reverse: boolean } | null = null
    for (const index of this.indexes.values()) {
      if (index.multikey) continue
      const p = index.plan(bound, sort)
      if (p.prefix === 0 && !(sort && p.ordered)) continue
      const score = p.prefix * 2 + (p.ordered ? 1 : 0)
      const bestScore = best ? best.prefix * 2 + (best.ordered ? 1 : 0) : -1
      if (score > bestScore) best = { index, bound, ...p }
    }
    return best
  }

  // ---- writes ----
  // Each write first waits for its turn on the connection (see EmbeddedDocumentStore.writer),
  // then runs synchronously, so nothing can change the documents between its read and its write.

  async insertOne(doc: T): Promise<void> {
    for (let wait; (wait = this.store.writeGate(this.batch)); ) await wait
    if (typeof doc._id !== 'string') throw new Error('documents need a string _id')
    if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, { _id: doc._id })
    this.write(null, cloneJson(doc))
  }

  async insertMany(docs: readonly T[]): Promise<void> {
    for (const doc of docs) await this.insertOne(doc)
  }

  async insertManyIfAbsent(docs: readonly T[]): Promise<number> {
    let inserted = 0
    for (const doc of docs) {
      try {
        await this.insertOne(doc)
        inserted++
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err
      }
    }
    return inserted
  }

  async updateOne(filter: Filter, update: Update, { upsert = false }: { upsert?: boolean } = {}): Promise<UpdateResult> {
    for (let wait; (wait = this.store.writeGate(this.batch)); ) await wait
    const current = this.query(filter, { limit: 1 })[0]
    if (current) {
      const stored = this.docs.get(current._id)!
      const next = applyUpdate(stored, update, false)
      if (deepEqual(next, stored)) return { matchedCount: 1, modifiedCount: 0, upsertedId: null }
      this.write(stored, next)
      return { matchedCount: 1, modifiedCount: 1, upsertedId: null }
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null }
    const seed = { _id: randomUUID(), ...seedFromFilter(filter) } as unknown as T
    const doc = applyUpdate(seed, update, true)
    if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, { _id: doc._id })
    this.write(null, doc)
    return { matchedCount: 0, modifiedCount: 0, upsertedId: doc._id }
  }

  async writeGuarded(writes: readonly GuardedWrite<T>[]): Promise<GuardedWriteResult> {
    // No round trips to save here: each write as on its own, a collision refusing only itself.
    let landed = 0
    const collided: number[] = []
    for (const [i, w] of writes.entries()) {
      try {
        if ('insert' in w) landed += (await this.insertOne(w.insert), 1)
        else if ('replace' in w) landed += (await this.replaceOne(w.filter, w.replace)).matchedCount
        else if ('update' in w) landed += (await this.updateOne(w.filter, w.update)).matchedCount
        else landed += (await this.deleteOne(w.delete)).deletedCount
      } catch (err) {
        if (!(err instanceof DuplicateKeyError) || !('insert' in w)) throw err
        collided.push(i)
      }
    }
    return { landed, collided }
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    for (let wait; (wait = this.store.writeGate(this.batch)); ) await wait
    const targets = this.query(filter, {}).map((d) => this.docs.get(d._id)!)
    // Compute every new version first so a failing update leaves all documents untouched.
    const nexts = targets.map((d) => applyUpdate(d, update, false))
    let modified = 0
    targets.forEach((d, i) => {
      if (deepEqual(nexts[i], d)) return
      this.write(d, nexts[i]!)
      modified++
    })
    return { matchedCount: targets.length, modifiedCount: modified, upsertedId: null }
  }

  async replaceOne(filter: Filter, doc: T, { upsert = false }: { upsert?: boolean } = {}): Promise<UpdateResult> {
    for (let wait; (wait = this.store.writeGate(this.batch)); ) await wait
    const current = this.query(filter, { limit: 1 })[0]
    if (current) {
      const stored = this.docs.get(current._id)!
      const next = { ...cloneJson(doc), _id: stored._id }
      if (deepEqual(next, stored)) return { matchedCount: 1, modifiedCount: 0, upsertedId: null }
      this.write(stored, next)
      return { matchedCount: 1, modifiedCount: 1, upsertedId: null }
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null }
    const next = { ...seedFromFilter(filter), ...cloneJson(doc) } as T
    if (typeof next._id !== 'string') next._id = randomUUID()
    if (this.docs.has(next._id)) throw new DuplicateKeyError(this.name, { _id: next._id })
    this.write(null, next)
    return { matchedCount: 0, modifiedCount: 0, upsertedId: next._id }
  }

  async deleteOne(filter: Filter): Promise<{ deletedCount: number }> {
    for (let wait; (wait = this.store.writeGate(this.batch)); ) await wait
    const d = this.query(filter, { limit: 1 })[0]
    if (!d) return { deletedCount: 0 }
    this.remove(this.docs.get(d._id)!)
    return { deletedCount: 1 }
  }

  async deleteMany(filter: Filter = {}): Promise<{ deletedCount: number }> {
    for (let wait; (wait = this.store.writeGate(this.batch)); ) await wait
    const targets = this.query(filter, {})
    for (const d of targets) this.remove(this.docs.get(d._id)!)
    return { deletedCount: targets.length }
  }

  async drop(): Promise<void> {
    for (let wait; (wait = this.store.writeGate(this.batch)); ) await wait
    this.stmts.deleteAll.run(this.name)
    this.batch?.dropped.add(this.state as CollectionState<Doc>)
    this.docs.clear()
    for (const index of this.indexes.values()) index.clear()
  }

  async createIndex(spec: IndexSpec): Promise<void> {
    for (let wait; (wait = this.store.writeGate(this.batch)); ) await wait
    const name = new SortedIndex(spec).name
    if (this.indexes.has(name)) return
    this.state.addIndex(spec)
    try {
      this.stmts.saveIndex.run(this.name, name, JSON.stringify(spec))
    } catch (err) {
      this.indexes.delete(name)
      throw err
    }
    if (this.batch) {
      const c = this.state as CollectionState<Doc>
      this.batch.newIndexes.set(c, [...(this.batch.newIndexes.get(c) ?? []), name])
    }
  }

  /** Replaces `before` (null: a new document) by `after` in storage, memory and indexes. */
  private write(before: T | null, after: T): void {
    for (const index of this.indexes.values()) {
      const other = index.conflict(after)
      if (other !== null) throw new DuplicateKeyError(this.name, index.keyOf(after))
    }
    // Storage first: if SQLite refuses (disk full), memory still holds the old version.
    this.stmts.upsert.run(this.name, after._id, JSON.stringify(after))
    this.batch?.remember(this.state as CollectionState<Doc>, after._id, before)
    for (const index of this.indexes.values()) {
      if (before) index.remove(before)
      index.insert(after)
    }
    this.docs.set(after._id, after)
  }

  private remove(doc: T): void {
    this.stmts.delete.run(this.name, doc._id)
    this.batch?.remember(this.state as CollectionState<Doc>, doc._id, doc)
    for (const index of this.indexes.values()) index.remove(doc)
    this.docs.delete(doc._id)
  }
}

/** The ids of an `_id` filter that is exactly `{ $in: [strings] }`, else null. */
function idsIn(value: unknown): string[] | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  const keys = Object.keys(value)
  const list = (value as { $in?: unknown }).$in
  return keys.length === 1 && Array.isArray(list) && list.every((v) => typeof v === 'string') ? (list as string[]) : null
}
