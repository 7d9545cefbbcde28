// BENCH VARIANT (not used by the service): a copy of adapters/embedded/documentStore.ts with one
// addition, `inTransaction`, so a projection batch commits once instead of once per document.
// Used by bench/projection-lag.ts with DOCS_BATCHED=1 to measure that suggestion.
//
// The embedded read-model store: MongoDB semantics (./query.ts) over documents held in memory
// and written through to a SQLite file, so read models survive restarts and queries are as fast
// as a map lookup or an index walk. One process owns the file for writing (the service); other
// processes (the auditor) may open it to read.
import { randomUUID } from 'node:crypto'
import { openSqlite, type SqliteDatabase } from '../../adapters/sqlite/database.ts'
import { SortedIndex } from '../../adapters/embedded/sortedIndex.ts'
import { applyUpdate, deepEqual, equalityBindings, matches, project, seedFromFilter, sortComparator } from '../../adapters/embedded/query.ts'
import {
  DuplicateKeyError,
  type Collection,
  type Doc,
  type DocumentStore,
  type Filter,
  type FindOptions,
  type IndexSpec,
  type SortSpec,
  type Update,
  type UpdateResult,
} from '../../ports/documentStore.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS documents (collection TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS indexes (collection TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, PRIMARY KEY (collection, name)) WITHOUT ROWID;
`

export function openBatchedDocumentStore({ path }: { path: string }): DocumentStore & { inTransaction<T>(fn: () => Promise<T>): Promise<T> } {
  // Read models can always be rebuilt from the event log, so commits skip the fsync; WAL keeps
  // them in order, so a crash loses a tail of writes together with their checkpoint.
  const db = openSqlite(path, { synchronous: 'NORMAL' })
  db.exec(SCHEMA)
  return new EmbeddedDocumentStore(db)
}

class EmbeddedDocumentStore implements DocumentStore {
  private readonly collections = new Map<string, EmbeddedCollection<Doc>>()
  constructor(private readonly db: SqliteDatabase) {}

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    let c = this.collections.get(name)
    if (!c) this.collections.set(name, (c = new EmbeddedCollection(name, this.db)))
    return c as unknown as Collection<T>
  }

  /** Runs `fn` in one SQLite transaction (only this store's writes may happen meanwhile). */
  async inTransaction<T>(fn: () => Promise<T>): Promise<T> {
    this.db.exec('BEGIN IMMEDIATE')
    try {
      const result = await fn()
      this.db.exec('COMMIT')
      return result
    } catch (err) {
      this.db.exec('ROLLBACK')
      throw err
    }
  }

  async close(): Promise<void> {
    this.db.close()
  }
}

class EmbeddedCollection<T extends Doc> implements Collection<T> {
  private docs = new Map<string, T>()
  private readonly indexes = new Map<string, SortedIndex>()
  private readonly stmts

  constructor(
    readonly name: string,
    private readonly db: SqliteDatabase,
  ) {
    this.stmts = {
      upsert: db.prepare('INSERT INTO documents (collection, id, body) VALUES (?, ?, ?) ON CONFLICT (collection, id) DO UPDATE SET body = excluded.body'),
      delete: db.prepare('DELETE FROM documents WHERE collection = ? AND id = ?'),
      deleteAll: db.prepare('DELETE FROM documents WHERE collection = ?'),
      saveIndex: db.prepare('INSERT OR REPLACE INTO indexes (collection, name, spec) VALUES (?, ?, ?)'),
    }
    for (const [body] of db.prepare('SELECT body FROM documents WHERE collection = ?').raw(true).all(name) as [string][]) {
      const doc = JSON.parse(body) as T
      this.docs.set(doc._id, doc)
    }
    for (const [spec] of db.prepare('SELECT spec FROM indexes WHERE collection = ?').raw(true).all(name) as [string][]) {
      this.addIndex(JSON.parse(spec) as IndexSpec)
    }
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
      return out.map((d) => structuredClone(project(d, projection)))
    }
    for (const d of plan ? this.byIds(plan.index.scan(plan.bound, plan.prefix, false)) : this.candidates(filter)) if (matches(d, filter)) out.push(d)
    out.sort(sortComparator(sortKeys))
    return out.slice(skip, skip + limit).map((d) => structuredClone(project(d, projection)))
  }

  private *byIds(ids: Iterable<string>): Generator<T> {
    for (const id of ids) {
      const d = this.docs.get(id)
      if (d) yield d
    }
  }

  /** Documents that may match: one by `_id`, or all of them. */
  private candidates(filter: Filter): Iterable<T> {
    const id = filter._id
    if (typeof id === 'string') {
      const d = this.docs.get(id)
      return d ? [d] : []
    }
    return this.docs.values()
  }

  /** Picks the index binding the most leading fields by equality, or one delivering the sort. */
  private plan(filter: Filter, sort: SortSpec | undefined) {
    if (typeof filter._id === 'string') return null
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

  async insertOne(doc: T): Promise<void> {
    if (typeof doc._id !== 'string') throw new Error('documents need a string _id')
    if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, { _id: doc._id })
    this.write(null, structuredClone(doc))
  }

  async updateOne(filter: Filter, update: Update, { upsert = false }: { upsert?: boolean } = {}): Promise<UpdateResult> {
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

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
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
    const current = this.query(filter, { limit: 1 })[0]
    if (current) {
      const stored = this.docs.get(current._id)!
      const next = { ...structuredClone(doc), _id: stored._id }
      if (deepEqual(next, stored)) return { matchedCount: 1, modifiedCount: 0, upsertedId: null }
      this.write(stored, next)
      return { matchedCount: 1, modifiedCount: 1, upsertedId: null }
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null }
    const next = { ...seedFromFilter(filter), ...structuredClone(doc) } as T
    if (typeof next._id !== 'string') next._id = randomUUID()
    if (this.docs.has(next._id)) throw new DuplicateKeyError(this.name, { _id: next._id })
    this.write(null, next)
    return { matchedCount: 0, modifiedCount: 0, upsertedId: next._id }
  }

  async deleteOne(filter: Filter): Promise<{ deletedCount: number }> {
    const d = this.query(filter, { limit: 1 })[0]
    if (!d) return { deletedCount: 0 }
    this.remove(this.docs.get(d._id)!)
    return { deletedCount: 1 }
  }

  async deleteMany(filter: Filter = {}): Promise<{ deletedCount: number }> {
    const targets = this.query(filter, {})
    for (const d of targets) this.remove(this.docs.get(d._id)!)
    return { deletedCount: targets.length }
  }

  async drop(): Promise<void> {
    this.stmts.deleteAll.run(this.name)
    this.docs = new Map()
    for (const index of this.indexes.values()) index.clear()
  }

  async createIndex(spec: IndexSpec): Promise<void> {
    const index = new SortedIndex(spec)
    if (this.indexes.has(index.name)) return
    this.addIndex(spec)
    this.stmts.saveIndex.run(this.name, index.name, JSON.stringify(spec))
  }

  private addIndex(spec: IndexSpec) {
    const index = new SortedIndex(spec)
    for (const d of this.docs.values()) {
      if (index.conflict(d)) throw new DuplicateKeyError(this.name, index.keyOf(d))
      index.insert(d)
    }
    this.indexes.set(index.name, index)
  }

  /** Replaces `before` (null: a new document) by `after` in storage, memory and indexes. */
  private write(before: T | null, after: T): void {
    for (const index of this.indexes.values()) {
      const other = index.conflict(after)
      if (other !== null) throw new DuplicateKeyError(this.name, index.keyOf(after))
    }
    // Storage first: if SQLite refuses (disk full), memory still holds the old version.
    this.stmts.upsert.run(this.name, after._id, JSON.stringify(after))
    for (const index of this.indexes.values()) {
      if (before) index.remove(before)
      index.insert(after)
    }
    this.docs.set(after._id, after)
  }

  private remove(doc: T): void {
    this.stmts.delete.run(this.name, doc._id)
    for (const index of this.indexes.values()) index.remove(doc)
    this.docs.delete(doc._id)
  }
}
