// A sorted in-memory index over one or more fields, like a MongoDB B-tree index: it enforces
// uniqueness and lets a query with equality on a key prefix, sorted by the remaining keys, read
// documents in order and stop at `limit`.
import type { Doc, IndexSpec, SortSpec } from '../../ports/documentStore.ts'
import { compareValues, getPath } from './query.ts'

interface Entry {
  key: unknown[]
  id: string
}

/** A position in the chunked entry list. */
interface Cursor {
  chunk: number
  at: number
}

// Entries live in sorted chunks of at most CHUNK_MAX, so an insert or removal moves at most a
// chunk's worth of entries instead of the whole index (a plain sorted array made every write to a
// collection of 100,000 documents shift 100,000 pointers per index).
const CHUNK_MAX = 1024

export class SortedIndex {
  readonly name: string
  readonly fields: [string, 1 | -1][]
  readonly unique: boolean
  private chunks: Entry[][] = []
  /** Set once any document holds an array under an indexed field: lookups are then unsafe. */
  multikey = false

  constructor(readonly spec: IndexSpec) {
    this.fields = Object.entries(spec.keys)
    this.name = spec.name ?? this.fields.map(([f, d]) => `${f}_${d}`).join('_')
    this.unique = spec.unique ?? false
  }

  keyOf(doc: Doc): unknown[] {
    return this.fields.map(([f]) => {
      const v = getPath(doc, f)
      if (Array.isArray(v)) this.multikey = true
      // MongoDB indexes a missing field as null (so two documents without it collide in a unique index).
      return v === undefined ? null : v
    })
  }

  private compareKeys(a: unknown[], b: unknown[]): number {
    for (let i = 0; i < this.fields.length; i++) {
      const c = compareValues(a[i], b[i])
      if (c !== 0) return c * this.fields[i]![1]
    }
    return 0
  }

  private compareEntries(a: Entry, b: Entry): number {
    return this.compareKeys(a.key, b.key) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  }

  /** Where the first entry for which `before(entry)` is false is (entries are partitioned by it). */
  private seek(before: (e: Entry) => boolean): Cursor {
    let lo = 0
    let hi = this.chunks.length
    // The first chunk whose last entry is not before.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const chunk = this.chunks[mid]!
      if (before(chunk[chunk.length - 1]!)) lo = mid + 1
      else hi = mid
    }
    if (lo === this.chunks.length) return { chunk: lo, at: 0 }
    const chunk = this.chunks[lo]!
    let a = 0
    let b = chunk.length
    while (a < b) {
      const mid = (a + b) >>> 1
      if (before(chunk[mid]!)) a = mid + 1
      else b = mid
    }
    return { chunk: lo, at: a }
  }

  /** First entry not before `key` on its first `prefixLength` fields (`upper`: first after them). */
  private lowerBound(key: unknown[], prefixLength: number, upper: boolean): Cursor {
    return this.seek((e) => {
      let c = 0
      for (let i = 0; i < prefixLength && c === 0; i++) c = compareValues(e.key[i], key[i]) * this.fields[i]![1]
      return c < 0 || (upper && c === 0)
    })
  }

  private *entriesFrom(from: Cursor, to: Cursor): Generator<Entry> {
    for (let c = from.chunk; c < this.chunks.length && c <= to.chunk; c++) {
      const chunk = this.chunks[c]!
      const end = c === to.chunk ? to.at : chunk.length
      for (let i = c === from.chunk ? from.at : 0; i < end; i++) yield chunk[i]!
    }
  }

  private *entriesBackwards(from: Cursor, to: Cursor): Generator<Entry> {
    for (let c = Math.min(to.chunk, this.chunks.length - 1); c >= from.chunk; c--) {
      const chunk = this.chunks[c]!
      const start = c === from.chunk ? from.at : 0
      for (let i = (c === to.chunk ? to.at : chunk.length) - 1; i >= start; i--) yield chunk[i]!
    }
  }

  /** The id of another document holding the same key, if the index is unique. */
  conflict(doc: Doc): string | null {
    if (!this.unique) return null
    const key = this.keyOf(doc)
    const n = this.fields.length
    for (const e of this.entriesFrom(this.lowerBound(key, n, false), this.lowerBound(key, n, true))) if (e.id !== doc._id) return e.id
    return null
  }

  insert(doc: Doc): void {
    const entry = { key: this.keyOf(doc), id: doc._id }
    if (this.chunks.length === 0) {
      this.chunks.push([entry])
      return
    }
    const at = this.seek((e) => this.compareEntries(e, entry) < 0)
    // Past the end: it joins the last chunk.
    const c = Math.min(at.chunk, this.chunks.length - 1)
    const chunk = this.chunks[c]!
    chunk.splice(at.chunk === c ? at.at : chunk.length, 0, entry)
    if (chunk.length > CHUNK_MAX) this.chunks.splice(c, 1, chunk.slice(0, chunk.length >> 1), chunk.slice(chunk.length >> 1))
  }

  remove(doc: Doc): void {
    const entry = { key: this.keyOf(doc), id: doc._id }
    const at = this.seek((e) => this.compareEntries(e, entry) < 0)
    const chunk = this.chunks[at.chunk]
    if (chunk?.[at.at]?.id === doc._id) {
      chunk.splice(at.at, 1)
      if (chunk.length === 0) this.chunks.splice(at.chunk, 1)
      return
    }
    // The document's indexed fields changed without the index knowing: find it by id.
    for (let c = 0; c < this.chunks.length; c++) {
      const i = this.chunks[c]!.findIndex((e) => e.id === doc._id)
      if (i === -1) continue
      this.chunks[c]!.splice(i, 1)
      if (this.chunks[c]!.length === 0) this.chunks.splice(c, 1)
      return
    }
  }

  clear(): void {
    this.chunks = []
    this.multikey = false
  }

  /**
   * How well this index serves a query: the number of leading fields bound by equality, and
   * whether the remaining fields deliver `sort` (forwards or backwards).
   */
  plan(bound: Map<string, unknown>, sort: SortSpec | undefined): { prefix: number; ordered: boolean; reverse: boolean } {
    let prefix = 0
    while (prefix < this.fields.length && bound.has(this.fields[prefix]![0])) prefix++
    const sortKeys = Object.entries(sort ?? {})
    if (sortKeys.length === 0) return { prefix, ordered: true, reverse: false }
    const rest = this.fields.slice(prefix)
    if (sortKeys.length > rest.length) return { prefix, ordered: false, reverse: false }
    const same = sortKeys.every(([f, d], i) => rest[i]![0] === f && rest[i]![1] === d)
    const flipped = sortKeys.every(([f, d], i) => rest[i]![0] === f && rest[i]![1] === -d)
    return { prefix, ordered: same || flipped, reverse: !same && flipped }
  }

  /** Document ids whose leading `prefix` fields equal `bound`, in index order (or reversed). */
  *scan(bound: Map<string, unknown>, prefix: number, reverse: boolean): Generator<string> {
    const key = this.fields.slice(0, prefix).map(([f]) => bound.get(f))
    const from = this.lowerBound(key, prefix, false)
    const to = this.lowerBound(key, prefix, true)
    for (const e of reverse ? this.entriesBackwards(from, to) : this.entriesFrom(from, to)) yield e.id
  }
}
