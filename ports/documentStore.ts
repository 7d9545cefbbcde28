// The read-model store port: a subset of MongoDB's collection API with the same semantics, so
// the embedded adapter and the MongoDB adapter answer every query identically. Deliberately
// absent: $text, transactions, change streams (FerretDB lacks them; see ARCHITECTURE).
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

export interface IndexSpec {
  keys: SortSpec
  unique?: boolean
  name?: string
}

export interface Collection<T extends Doc = Doc> {
  readonly name: string
  findOne(filter: Filter, options?: Omit<FindOptions, 'limit'>): Promise<T | null>
  find(filter: Filter, options?: FindOptions): Promise<T[]>
  countDocuments(filter?: Filter): Promise<number>
  /** Throws DuplicateKeyError when `_id` or a unique index collides. */
  insertOne(doc: T): Promise<void>
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>
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
