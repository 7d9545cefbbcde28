// The read-model store port: a subset of MongoDB's collection API with the same semantics, so
// the embedded adapter and the MongoDB adapter answer every query identically. Deliberately
// absent: $text, multi-document transactions, change streams (FerretDB lacks them; see
// ARCHITECTURE). `writeBatch` is the one grouping of writes, and only the embedded store makes
// it atomic.
//
// Supported filter operators: equality (with MongoDB's array-contains rule), dotted paths,
// $eq $ne $gt $gte $lt $lte $in $nin $all $exists $size $elemMatch $not $and $or $nor $regex.
// Supported update operators: $set $unset $inc $push (with $each) $addToSet (with $each)
// $pull (equality) $setOnInsert $max $min. Sorting compares like MongoDB for same-typed values
// (numbers, strings, booleans, null/missing first when ascending).

export type Doc = { _id: string } & Record<string, unknown>

export type Filter = Record<string, unknown>
export type Update = Partial<
  Record<'$set' | '$unset' | '$inc' | '$push' | '$addToSet' | '$pull' | '$setOnInsert' | '$max' | '$min', Record<string, unknown>>
>
export type SortSpec = Record<string, 1 | -1>

export interface FindOptions {
  sort?: SortSpec
  limit?: number
  skip?: number
  /** Inclusion projection: fields to return (`_id` always included). */
  projection?: Record<string, 1>
}

export interface UpdateResult {
  matchedCount: number
  modifiedCount: number
  upsertedId: string | null
}

/**
 * One write of `writeGuarded`. Each lands only where its filter matches: the caller puts what it
 * read into the filter (`{ _id, revision }`), so a write computed from a state someone else has
 * moved on since matches nothing (compare-and-set). `insert` lands only where its `_id` is free.
 */
export type GuardedWrite<T extends Doc = Doc> =
  | { insert: T }
  | { replace: T; filter: Filter }
  | { update: Update; filter: Filter }
  | { delete: Filter }

export interface GuardedWriteResult {
  /** How many of the writes landed (matched their filter, or inserted). */
  landed: number
  /** Indexes (into the writes given) of the inserts refused for a duplicate key (`_id` or a unique index): they changed nothing. */
  collided: number[]
}

export interface IndexSpec {
  keys: SortSpec
  unique?: boolean
  name?: string
  /**
   * A TTL index (MongoDB): documents go once the date in the one key field is this many seconds
   * past. The embedded store ignores it (nothing it holds uses it: the shared counters that do
   * run on MongoDB only), as does FerretDB 1.x, so readers must not rely on expiry to be timely.
   */
  expireAfterSeconds?: number
}

export interface Collection<T extends Doc = Doc> {
  readonly name: string
  findOne(filter: Filter, options?: Omit<FindOptions, 'limit'>): Promise<T | null>
  find(filter: Filter, options?: FindOptions): Promise<T[]>
  countDocuments(filter?: Filter): Promise<number>
  /** Throws DuplicateKeyError when `_id` or a unique index collides. */
  insertOne(doc: T): Promise<void>
  /** Inserts `docs` in order, as few round trips as the store allows (MongoDB: one bulk write). Throws DuplicateKeyError at the first collision; the ones before it stay. */
  insertMany(docs: readonly T[]): Promise<void>
  /**
   * Inserts each of `docs` whose `_id` is free and that collides with no unique index; the others
   * stay as stored (whoever wrote first wins; of two with one `_id` in `docs`, the first). A
   * projection's creates, one batch at a time: a fixed number of round trips whatever the count
   * (MongoDB: one unordered bulk insert; inside a transaction, a query for the ids already there
   * first). Answers how many were inserted.
   */
  insertManyIfAbsent(docs: readonly T[]): Promise<number>
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>
  /**
   * Applies `writes`, each to at most one document, in a fixed number of round trips whatever
   * their count (MongoDB: one unordered bulk write, i.e. one request per kind of write present):
   * a projection batch's writes, one per document it touched. Give at most one write per
   * document: writes to distinct documents are independent, and their order is not defined. An
   * insert that collides with `_id` or a unique index changes nothing and is reported in
   * `collided`; the others still apply. An update or replace that would break a unique index
   * throws DuplicateKeyError, as `updateOne` does (the other writes may or may not have landed:
   * FerretDB 1.x fails the whole update request). Never upserts.
   */
  writeGuarded(writes: readonly GuardedWrite<T>[]): Promise<GuardedWriteResult>
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>
  replaceOne(filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<UpdateResult>
  deleteOne(filter: Filter): Promise<{ deletedCount: number }>
  deleteMany(filter?: Filter): Promise<{ deletedCount: number }>
  createIndex(spec: IndexSpec): Promise<void>
  /** Removes every document (and keeps the indexes). */
  drop(): Promise<void>
}

export interface DocumentStore {
  collection<T extends Doc = Doc>(name: string): Collection<T>
  /**
   * Runs `fn` as one write batch (the projection runner uses one per projection batch: the
   * read-model writes and the checkpoint). `fn` must write through the store it is given, not
   * through this one; writes through this one (or any other caller's) are outside the batch.
   *
   * When `atomicWriteBatches` is true, the batch's writes commit together or not at all: if `fn`
   * rejects (or the commit fails) nothing it wrote is left behind, neither in memory nor on disk,
   * and the error is rethrown. Writes from outside the batch are never part of it: they wait
   * while a batch that has started writing is open, so a rollback cannot take them with it. A
   * batch must therefore not wait for an outside write of the same store (it would wait for
   * itself). Reads are not isolated: readers see a batch's writes before it commits.
   *
   * MongoDB on a replica set (or behind mongos) makes a batch one transaction, and says true.
   * When false (a standalone MongoDB, and FerretDB, which lacks transactions), `fn` simply runs and each
   * write stands on its own; a failing batch leaves its earlier writes behind, which the
   * projections tolerate because they apply every event idempotently.
   */
  writeBatch<R>(fn: (batch: DocumentStore) => Promise<R>): Promise<R>
  readonly atomicWriteBatches: boolean
  /**
   * Makes what was deleted unrecoverable from the store's files where the store keeps old
   * versions around (the embedded store's write-ahead log); absent where the server manages that.
   */
  eraseFreedSpace?(): Promise<void>
  close(): Promise<void>
}

export class DuplicateKeyError extends Error {
  override readonly name = 'DuplicateKeyError'
  constructor(
    readonly collection: string,
    readonly key: unknown,
  ) {
    super(`duplicate key in ${collection}: ${JSON.stringify(key)}`)
  }
}

/**
 * The store's server did not answer (unreachable, connection lost, no server selected): nothing
 * is wrong with the request, so callers answer "unavailable, retry shortly" instead of an
 * internal error. The message is the driver's own; `cause` its error.
 */
export class DocumentStoreUnavailableError extends Error {
  override readonly name = 'DocumentStoreUnavailableError'
}
