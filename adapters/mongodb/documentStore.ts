// The DocumentStore port on MongoDB (or anything speaking its wire protocol, e.g. FerretDB in
// tests) through the official `mongodb` driver. This is the only file that imports `mongodb`.
//
// Deliberately unused: $text, change streams (FerretDB 1.x lacks them; see ARCHITECTURE).
// Transactions only where the server has them (a replica set: `writeBatch`), never required. The port's filters, updates, sorts and projections are MongoDB's own, so they are
// passed through unchanged; this file only adapts shapes (results, errors, index options).
//
// Three FerretDB 1.x deviations are bridged here so the adapter keeps MongoDB's semantics, and a
// usable speed, on the test server too (no such path is taken on a real MongoDB):
// - `{ arr: { $elemMatch: { field: ..., ... } } }` (a query on the fields of array elements) is
//   unsupported in FerretDB 1.x: with one field it silently matches nothing, with several it fails
//   with "unknown operator" ($ne, $not, $and, $or, $nor inside $elemMatch: "not implemented").
//   When the server reports a FerretDB 1.x version (buildInfo), each $elemMatch clause is resolved
//   first with an aggregation ($unwind + $match on the single element, which
//   is exactly $elemMatch's "one element satisfies all conditions") and replaced by an `_id` $in
//   / $nin clause. That costs one extra round trip and is not atomic with the write that follows.
// - a unique-index violation caused by an update comes back as InternalError (code 1)
//   "... UNIQUE constraint failed: index ..." instead of code 11000; it is mapped to
//   DuplicateKeyError like the real thing.
// - a read by `_id` plus other fields scans the whole collection (`findById` below).
import { MongoBulkWriteError, MongoClient, MongoNetworkError, MongoNotConnectedError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError, type AnyBulkWriteOperation, type BulkWriteResult, type ClientSession, type Collection as MongoCollection, type Db, type Document, type UpdateFilter } from 'mongodb'
import { matches, projectCopy } from '../embedded/query.ts'
import {
  DocumentStoreUnavailableError,
  DuplicateKeyError,
  type Collection,
  type Doc,
  type DocumentStore,
  type Filter,
  type FindOptions,
  type GuardedWrite,
  type GuardedWriteResult,
  type IndexSpec,
  type Update,
  type UpdateResult,
} from '../../ports/documentStore.ts'

const DUPLICATE_KEY = 11000
/** Update statements per request to FerretDB 1.x (see `writeGuarded`). */
const UPDATES_PER_FERRETDB_REQUEST = 10

/** How long a client may keep failing with network errors before it is replaced (see `ReconnectingClient`). */
export const RECONNECT_AFTER_MS = 15_000

export interface MongoStoreOptions {
  /** Default RECONNECT_AFTER_MS; `Infinity` keeps the first client for good. */
  reconnectAfterMs?: number
  /** Told when the client is replaced. */
  log?: (message: string) => void
}

/**
 * Connects to `url` and returns a DocumentStore over database `dbName`. Fails (rejects) when no
 * server answers within the driver's server-selection timeout (30 s by default; set
 * `serverSelectionTimeoutMS` in the URL to change it).
 */
export async function openMongoDocumentStore(url: string, dbName: string, options: MongoStoreOptions = {}): Promise<DocumentStore> {
  const client = newClient(url)
  await client.connect()
  try {
    const db = client.db(dbName)
    await db.command({ ping: 1 })
    const ferret = await isFerretDb1(client)
    const holder = new ReconnectingClient(url, dbName, client, options)
    return new MongoDocumentStore(holder, { elemMatchViaAggregation: ferret, idAloneLookup: ferret, transactions: !ferret && (await offersTransactions(client)) })
  } catch (err) {
    await client.close().catch(() => {})
    throw err
  }
}

/** Socket errors the driver lets through unwrapped (a write after the server closed: EPIPE). */
const SOCKET_ERRORS = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH', 'ENETUNREACH'])

/** ShutdownInProgress, InterruptedAtShutdown. */
const SHUTTING_DOWN = new Set([91, 11600])

/** The server did not answer, as opposed to answering with an error. */
export const unreachable = (err: unknown): err is Error =>
  (err instanceof Error && SOCKET_ERRORS.has(String((err as { code?: unknown }).code))) ||
  err instanceof MongoNetworkError ||
  err instanceof MongoServerSelectionError ||
  err instanceof MongoTopologyClosedError ||
  err instanceof MongoNotConnectedError ||
  // The server answered that it is going away: as good as not answering.
  (err instanceof MongoServerError && SHUTTING_DOWN.has(Number(err.code))) ||
  // A bulk write (insertMany, bulkWrite) cut off by the network comes back as a bulk write error
  // without write errors, with the network error's fields copied onto it: the fault suite's api
  // answered 500 for a note created while FerretDB stopped.
  (err instanceof MongoBulkWriteError && [err.writeErrors].flat().length === 0 && !err.writeConcernError && ('beforeHandshake' in err || 'reason' in err))

// ignoreUndefined: `{ a: undefined }` leaves `a` out (as JSON and the embedded store do) instead
// of the driver's default of storing null.
const newClient = (url: string) => new MongoClient(url, { ignoreUndefined: true })

/**
 * The client of a store, replaced by a fresh one when its operations have failed with network
 * errors for `reconnectAfterMs` without one success in between. After FerretDB was stopped and
 * started again under load, a client once kept failing every operation with the error of a
 * connection closed by the old server ("connection 5 to …:27142 closed"), for minutes, while a new
 * client in the same process read at once: the projections process's key-store client stalled
 * every loop (test/scale.faults.test.ts). Against a server that is really down a new client fails
 * the same way and changes nothing.
 */
class ReconnectingClient {
  db: Db
  private failingSince: number | null = null
  private readonly reconnectAfterMs: number

  constructor(
    private readonly url: string,
    private readonly dbName: string,
    public client: MongoClient,
    private readonly options: MongoStoreOptions,
  ) {
    this.db = client.db(dbName)
    this.reconnectAfterMs = options.reconnectAfterMs ?? RECONNECT_AFTER_MS
  }

  succeeded(): void {
    this.failingSince = null
  }

  failed(err: unknown): void {
    if (!unreachable(err)) return
    const now = Date.now()
    this.failingSince ??= now
    if (now - this.failingSince < this.reconnectAfterMs) return
    const seconds = Math.round((now - this.failingSince) / 1000)
    const old = this.client
    this.client = newClient(this.url)
    this.db = this.client.db(this.dbName)
    this.failingSince = null
    this.options.log?.(`mongodb: operations on database ${this.dbName} failed for ${seconds} s (last: ${err.message}); replaced the client`)
    // Its operations still in flight fail and are retried by their callers on the new one.
    void old.close(true).catch(() => {})
  }

  /** `target` with each of its calls noted: whether the client answered. */
  tracked<C extends object>(target: C): C {
    return new Proxy(target, {
      get: (t, prop) => {
        const v = Reflect.get(t, prop, t) as unknown
        if (typeof v !== 'function') return v
        return (...args: unknown[]) => {
          const r = (v as (...a: unknown[]) => unknown).apply(t, args)
          if (!(r instanceof Promise)) return r
          return r.then(
            (value) => (this.succeeded(), value),
            (err: unknown) => {
              this.failed(err)
              throw unreachable(err) ? new DocumentStoreUnavailableError(err.message, { cause: err }) : err
            },
          )
        }
      },
    })
  }

  close(): Promise<void> {
    return this.client.close()
  }
}

/** Drops a whole database (test cleanup, tooling). Opens and closes its own connection. */
export async function dropMongoDatabase(url: string, dbName: string): Promise<void> {
  const client = new MongoClient(url)
  try {
    await client.connect()
    await client.db(dbName).dropDatabase()
  } finally {
    await client.close()
  }
}

/** True for FerretDB 1.x, whose $elemMatch lacks queries on element fields. */
async function isFerretDb1(client: MongoClient): Promise<boolean> {
  try {
    const info = await client.db('admin').command({ buildInfo: 1 })
    const version = typeof info.ferretdbVersion === 'string' ? info.ferretdbVersion : null
    return version !== null && /^v?1\./.test(version)
  } catch {
    return false
  }
}

/** True for a replica-set member or a mongos: servers where multi-document transactions exist (FerretDB 1.x has none). */
async function offersTransactions(client: MongoClient): Promise<boolean> {
  try {
    const hello = await client.db('admin').command({ hello: 1 })
    return typeof hello.setName === 'string' || hello.msg === 'isdbgrid'
  } catch {
    return false
  }
}

interface ServerQuirks {
  elemMatchViaAggregation: boolean
  /** Only a filter that is a lone string `_id` is answered from the primary key; any other field beside it scans the collection. */
  idAloneLookup: boolean
  /** Multi-document transactions: a write batch (a projection batch and its checkpoint) commits as one. */
  transactions: boolean
}

const CLIENT = Symbol('the current MongoClient')

/** The client a store opened here uses now (for tests and diagnostics); null for other stores. */
export function currentMongoClient(store: DocumentStore): MongoClient | null {
  return store instanceof MongoDocumentStore ? store[CLIENT]() : null
}

class MongoDocumentStore implements DocumentStore {
  [CLIENT] = () => this.holder.client

  // On a replica set (compose runs MongoDB as one) a write batch is one transaction: a projection
  // batch and its checkpoint commit together. Without transactions (a standalone server, and
  // FerretDB, which lacks them) a batch is just its writes, each standing on its own; the
  // projections' per-event idempotency covers a batch that fails halfway. Only the second path
  // runs in this repository's tests (FerretDB); the first is untested here.
  get atomicWriteBatches(): boolean {
    return this.quirks.transactions
  }

  constructor(
    private readonly holder: ReconnectingClient,
    private readonly quirks: ServerQuirks,
    private readonly session?: { session: ClientSession; db: Db },
  ) {}

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    // In a transaction, its session's client; else whichever client the holder has now.
    const session = this.session
    const holder = this.holder
    return holder.tracked(new MongoDocumentCollection<T>(() => (session ? session.db : holder.db).collection(name), name, this.quirks, session?.session))
  }

  async writeBatch<R>(fn: (batch: DocumentStore) => Promise<R>): Promise<R> {
    if (!this.quirks.transactions || this.session) return fn(this)
    const db = this.holder.db
    const session = this.holder.client.startSession()
    try {
      let result!: R
      // withTransaction retries the whole batch on a transient error (the projections re-apply
      // it from scratch: nothing of the aborted attempt stays).
      await session.withTransaction(async () => {
        result = await fn(new MongoDocumentStore(this.holder, this.quirks, { session, db }))
      })
      return result
    } finally {
      await session.endSession()
    }
  }

  async close(): Promise<void> {
    await this.holder.close()
  }
}

class MongoDocumentCollection<T extends Doc> implements Collection<T> {
  constructor(
    private readonly driverCollection: () => MongoCollection<Document>,
    readonly name: string,
    private readonly quirks: ServerQuirks,
    /** The write batch's transaction, when there is one: every operation runs in it. */
    private readonly session?: ClientSession,
  ) {}

  /** The driver's collection on the current client (replaced after a lasting network failure). */
  private get c(): MongoCollection<Document> {
    return this.driverCollection()
  }

  async findOne(filter: Filter, options: Omit<FindOptions, 'limit'> = {}): Promise<T | null> {
    const [doc] = await this.find(filter, { ...options, limit: 1 })
    return doc ?? null
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    if (this.quirks.idAloneLookup && typeof filter._id === 'string' && Object.keys(filter).length > 1) return this.findById(filter, filter._id, options)
    let cursor = this.c.find(await this.q(filter), { session: this.session })
    if (options.sort && Object.keys(options.sort).length > 0) cursor = cursor.sort(options.sort)
    if (options.skip) cursor = cursor.skip(options.skip)
    if (options.limit) cursor = cursor.limit(options.limit)
    if (options.projection) cursor = cursor.project(options.projection)
    // The driver deserialises BSON into fresh plain objects on every read, so callers may
    // mutate what they get without touching anything stored.
    return (await cursor.toArray()) as unknown as T[]
  }

  /**
   * FerretDB 1.x answers a filter from its primary key only when the filter is a lone string `_id`
   * (internal/backends/sqlite/collection.go); `_id` with any other field (every read of one
   * tenant's document: `{ _id, accountId }`) scans the whole collection, ~0.5 s at 14,000 notes.
   * So the document is fetched by `_id` alone and the rest of the filter applied here, with the
   * embedded store's matcher (MongoDB's semantics, held to them by the conformance suite): the
   * same answer, one primary-key read. Reads only: a write's filter must stay on the server,
   * where filter and update apply atomically.
   */
  private async findById(filter: Filter, id: string, options: FindOptions): Promise<T[]> {
    const doc = (await this.c.findOne({ _id: id } as Document, { session: this.session })) as unknown as T | null
    if (!doc || !matches(doc, filter) || (options.skip ?? 0) > 0) return []
    return [projectCopy(doc, options.projection)]
  }

  async countDocuments(filter: Filter = {}): Promise<number> {
    return this.c.countDocuments(await this.q(filter), { session: this.session })
  }

  async insertOne(doc: T): Promise<void> {
    await this.write(() => this.c.insertOne({ ...doc } as Document, { session: this.session }))
  }

  async insertMany(docs: readonly T[]): Promise<void> {
    if (docs.length === 0) return
    // One ordered bulk write (the driver splits it at the server's message size).
    await this.write(() => this.c.insertMany(docs.map((d) => ({ ...d }) as Document), { ordered: true, session: this.session }))
  }

  async insertManyIfAbsent(docs: readonly T[]): Promise<number> {
    // Inside a transaction (a replica set) a write error would abort the whole batch, so the ids
    // already there are left out first and the common case raises no duplicate-key error at all.
    // Outside one, a collision costs nothing: one round trip.
    const taken = new Set<string>()
    if (this.session) {
      const stored = await this.c.find({ _id: { $in: [...new Set(docs.map((d) => d._id))] } } as Document, { projection: { _id: 1 }, session: this.session }).toArray()
      for (const d of stored) taken.add(String(d._id))
    }
    const fresh: Document[] = []
    for (const d of docs) if (!taken.has(d._id)) (taken.add(d._id), fresh.push({ ...d }))
    if (fresh.length === 0) return 0
    try {
      return (await this.c.insertMany(fresh, { ordered: false, session: this.session })).insertedCount
    } catch (err) {
      // Another writer got some of them in between (or a unique index collides): those stay as
      // they are, the rest went in (unordered).
      if (err instanceof MongoBulkWriteError && onlyDuplicateKeys(err)) return err.insertedCount
      throw err
    }
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const f = await this.q(filter)
    return toUpdateResult(await this.write(() => this.c.updateOne(f, update as UpdateFilter<Document>, { upsert: options.upsert ?? false, session: this.session })))
  }

  async writeGuarded(writes: readonly GuardedWrite<T>[]): Promise<GuardedWriteResult> {
    if (writes.length === 0) return { landed: 0, collided: [] }
    const ops: AnyBulkWriteOperation<Document>[] = []
    for (const w of writes) {
      if ('insert' in w) ops.push({ insertOne: { document: { ...w.insert } as Document } })
      else if ('replace' in w) ops.push({ replaceOne: { filter: await this.q(w.filter), replacement: { ...w.replace } as Document, upsert: false } })
      else if ('update' in w) ops.push({ updateOne: { filter: await this.q(w.filter), update: w.update as UpdateFilter<Document>, upsert: false } })
      else ops.push({ deleteOne: { filter: await this.q(w.delete) } })
    }
    // Unordered: the driver sends one request per kind of write (insert, update, delete), and a
    // collision stops nothing else. FerretDB 1.x scans the collection for each update statement
    // (a filter beside `_id`) and takes superlinearly longer the more statements one request
    // holds (at 400 documents, here: 10 in 47 ms, 50 in 271 ms, 100 not done within a minute), so
    // there its updates go in requests of at most UPDATES_PER_FERRETDB_REQUEST.
    const chunks: number[][] = []
    const updates = ops.flatMap((op, i) => ('insertOne' in op || 'deleteOne' in op ? [] : [i]))
    const others = ops.flatMap((op, i) => ('insertOne' in op || 'deleteOne' in op ? [i] : []))
    if (!this.quirks.idAloneLookup) chunks.push(ops.map((_, i) => i))
    else {
      if (others.length > 0) chunks.push(others)
      for (let i = 0; i < updates.length; i += UPDATES_PER_FERRETDB_REQUEST) chunks.push(updates.slice(i, i + UPDATES_PER_FERRETDB_REQUEST))
    }
    const result: GuardedWriteResult = { landed: 0, collided: [] }
    for (const chunk of chunks) {
      const r = await this.bulkGuarded(chunk.map((i) => ops[i]!), chunk.map((i) => writes[i]!))
      result.landed += r.landed
      result.collided.push(...r.collided.map((j) => chunk[j]!))
    }
    result.collided.sort((a, b) => a - b)
    return result
  }

  private async bulkGuarded(ops: AnyBulkWriteOperation<Document>[], writes: readonly GuardedWrite<T>[]): Promise<GuardedWriteResult> {
    const landed = (r: BulkWriteResult) => r.insertedCount + r.matchedCount + r.deletedCount
    try {
      return { landed: landed(await this.c.bulkWrite(ops, { ordered: false, session: this.session })), collided: [] }
    } catch (err) {
      const insertsOnly = err instanceof MongoBulkWriteError && [err.writeErrors].flat().every((e) => 'insert' in writes[e.index]!)
      if (!(err instanceof MongoBulkWriteError) || !onlyDuplicateKeys(err) || !insertsOnly) {
        if (isDuplicateKey(err)) throw new DuplicateKeyError(this.c.collectionName, duplicateKeyOf(err))
        throw err
      }
      return { landed: landed(err.result), collided: [err.writeErrors].flat().map((e) => e.index) }
    }
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const f = await this.q(filter)
    return toUpdateResult(await this.write(() => this.c.updateMany(f, update as UpdateFilter<Document>, { session: this.session })))
  }

  async replaceOne(filter: Filter, doc: T, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const f = await this.q(filter)
    return toUpdateResult(await this.write(() => this.c.replaceOne(f, { ...doc }, { upsert: options.upsert ?? false, session: this.session })))
  }

  async deleteOne(filter: Filter): Promise<{ deletedCount: number }> {
    const r = await this.c.deleteOne(await this.q(filter), { session: this.session })
    return { deletedCount: r.deletedCount }
  }

  async deleteMany(filter: Filter = {}): Promise<{ deletedCount: number }> {
    const r = await this.c.deleteMany(await this.q(filter), { session: this.session })
    return { deletedCount: r.deletedCount }
  }

  async createIndex(spec: IndexSpec): Promise<void> {
    // The same keys and options again is a no-op on the server (MongoDB and FerretDB alike).
    // Outside any transaction: MongoDB builds no index on an existing collection inside one.
    await this.c.createIndex(spec.keys, {
      ...(spec.unique ? { unique: true } : {}),
      ...(spec.name ? { name: spec.name } : {}),
      ...(spec.expireAfterSeconds !== undefined ? { expireAfterSeconds: spec.expireAfterSeconds } : {}),
    })
  }

  async drop(): Promise<void> {
    // Documents only: a collection drop would also drop the indexes the port promises to keep.
    await this.c.deleteMany({}, { session: this.session })
  }

  /** The filter as this server needs it (unchanged except for FerretDB 1.x's $elemMatch). */
  private async q(filter: Filter): Promise<Filter> {
    if (!this.quirks.elemMatchViaAggregation) return filter
    return resolveElemMatch(filter, (path, query) => this.idsWithElementMatching(path, query))
  }

  /** `_id`s of the documents where one element of the array at `path` matches `query`. */
  private async idsWithElementMatching(path: string, query: Record<string, unknown>): Promise<unknown[]> {
    const rows = await this.c
      .aggregate([
        { $match: { [path]: { $type: 'array' } } },
        { $unwind: '$' + path },
        { $match: elementFilter(path, query) },
        { $group: { _id: '$_id' } },
      ], { session: this.session })
      .toArray()
    return rows.map((r) => r._id)
  }

  private async write<R>(op: () => Promise<R>): Promise<R> {
    try {
      return await op()
    } catch (err) {
      if (isDuplicateKey(err)) throw new DuplicateKeyError(this.c.collectionName, duplicateKeyOf(err))
      throw err
    }
  }
}

function toUpdateResult(r: { matchedCount: number; modifiedCount: number; upsertedId: unknown }): UpdateResult {
  return {
    matchedCount: r.matchedCount,
    modifiedCount: r.modifiedCount,
    upsertedId: r.upsertedId == null ? null : String(r.upsertedId),
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype

const LOGICAL = new Set(['$and', '$or', '$nor'])
/** A query on the fields of document elements, as opposed to an operator expression on scalars. */
const isFieldQuery = (q: Record<string, unknown>) => Object.keys(q).some((k) => !k.startsWith('$') || LOGICAL.has(k))

/**
 * Replaces every `{ path: { $elemMatch: Q } }` (and every `{ path: { $not: { $elemMatch: Q } } }`)
 * by `{ _id: { $in | $nin: ids } }`, with the ids from
 * `resolve`. Equivalent in any position ($and/$or/$nor included), since each such clause is a
 * predicate on the whole document. Returns the filter itself when nothing needs replacing.
 */
async function resolveElemMatch(
  filter: Filter,
  resolve: (path: string, query: Record<string, unknown>) => Promise<unknown[]>,
): Promise<Filter> {
  let changed = false
  const out: Filter = {}
  const extra: Filter[] = []
  for (const [key, value] of Object.entries(filter)) {
    if (LOGICAL.has(key) && Array.isArray(value)) {
      const parts = await Promise.all(value.map((v) => (isPlainObject(v) ? resolveElemMatch(v, resolve) : v)))
      if (parts.some((p, i) => p !== value[i])) changed = true
      out[key] = parts
      continue
    }
    if (key.startsWith('$') || !isPlainObject(value)) {
      out[key] = value
      continue
    }
    const rest: Record<string, unknown> = { ...value }
    const em = value.$elemMatch
    if (isPlainObject(em)) {
      delete rest.$elemMatch
      extra.push({ _id: { $in: await resolve(key, em) } })
    }
    const not = value.$not
    if (isPlainObject(not) && Object.keys(not).length === 1 && isPlainObject(not.$elemMatch)) {
      delete rest.$not
      extra.push({ _id: { $nin: await resolve(key, not.$elemMatch) } })
    }
    if (Object.keys(rest).length !== Object.keys(value).length) {
      changed = true
      if (Object.keys(rest).length > 0) out[key] = rest
    } else {
      out[key] = value
    }
  }
  if (!changed) return filter
  return extra.length === 0 ? out : { $and: [...(Object.keys(out).length > 0 ? [out] : []), ...extra] }
}

/**
 * After `$unwind` on `path`, the element is the value at `path`. An operator expression
 * (`{ $gte: 5, $ne: 7 }`) applies to it directly. In a query on element fields, field conditions
 * move under `path.`, operator conditions apply to `path` itself, and only document elements can
 * match (as in MongoDB). Nested $elemMatch inside Q is passed on as is.
 */
function elementFilter(path: string, query: Record<string, unknown>): Filter {
  const prefix = (q: Record<string, unknown>): Filter => {
    const out: Filter = {}
    const ops: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(q)) {
      if (LOGICAL.has(k) && Array.isArray(v)) out[k] = v.map((x) => (isPlainObject(x) ? prefix(x) : x))
      else if (k.startsWith('$')) ops[k] = v
      else out[`${path}.${k}`] = v
    }
    return Object.keys(ops).length > 0 ? { $and: [out, { [path]: ops }] } : out
  }
  if (!isFieldQuery(query)) return { [path]: query }
  return { $and: [{ [path]: { $type: 'object' } }, prefix(query)] }
}

// FerretDB 1.x (SQLite / PostgreSQL backends) reports a unique violation from an update as
// InternalError with the backend's message instead of 11000.
const BACKEND_UNIQUE_VIOLATION = /UNIQUE constraint failed|duplicate key value violates unique constraint/

function isDuplicateKey(err: unknown): err is MongoServerError {
  if (!(err instanceof MongoServerError)) return false
  if (err.code === DUPLICATE_KEY) return true
  if (err.code === 1 && BACKEND_UNIQUE_VIOLATION.test(err.message)) return true
  const writeErrors = (err as { writeErrors?: Array<{ code?: number }> }).writeErrors
  return Array.isArray(writeErrors) && writeErrors.some((e) => e.code === DUPLICATE_KEY)
}

/** A bulk write whose every failed document failed on a duplicate key (and nothing else went wrong). */
function onlyDuplicateKeys(err: MongoBulkWriteError): boolean {
  const errors = [err.writeErrors].flat()
  return errors.length > 0 && errors.every((e) => e.code === DUPLICATE_KEY || (e.code === 1 && BACKEND_UNIQUE_VIOLATION.test(e.errmsg ?? ''))) && !err.writeConcernError
}

/** The colliding key as MongoDB reports it (`keyValue`), else the server's message. */
function duplicateKeyOf(err: MongoServerError): unknown {
  const keyValue = (err as { keyValue?: unknown }).keyValue ?? err.errorResponse?.keyValue
  return keyValue ?? err.message
}
