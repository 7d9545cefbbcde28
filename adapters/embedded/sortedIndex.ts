// A sorted in-memory index over one or more fields, like a MongoDB B-tree index: it enforces
// uniqueness and lets a query with equality on a key prefix, sorted by the remaining keys, read
// documents in order and stop at `limit`.
import type { Doc, IndexSpec, SortSpec } from '../../ports/documentStore.ts'
import { compareValues, getPath } from './query.ts'

interface Entry {
  key: unknown[]
  id: string
}

export class SortedIndex {
  readonly name: string
  readonly fields: [string, 1 | -1][]
  readonly unique: boolean
  private entries: Entry[] = []
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

  /** First index whose entry is not before `probe` (by key only when `id` is undefined). */
  private lowerBound(key: unknown[], prefixLength: number, upper: boolean): number {
    let lo = 0
    let hi = this.entries.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      let c = 0
      for (let i = 0; i < prefixLength && c === 0; i++) c = compareValues(this.entries[mid]!.key[i], key[i]) * this.fields[i]![1]
      if (c < 0 || (upper && c === 0)) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** The id of another document holding the same key, if the index is unique. */
  conflict(doc: Doc): string | null {
    if (!this.unique) return null
    const key = this.keyOf(doc)
    const i = this.lowerBound(key, this.fields.length, false)
    for (let j = i; j < this.entries.length && this.compareKeys(this.entries[j]!.key, key) === 0; j++) {
      if (this.entries[j]!.id !== doc._id) return this.entries[j]!.id
    }
    return null
  }

  insert(doc: Doc): void {
    const entry = { key: this.keyOf(doc), id: doc._id }
    let lo = 0
    let hi = this.entries.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.compareEntries(this.entries[mid]!, entry) < 0) lo = mid + 1
      else hi = mid
    }
    this.entries.splice(lo, 0, entry)
  }

  remove(doc: Doc): void {
    const entry = { key: this.keyOf(doc), id: doc._id }
    let lo = 0
    let hi = this.entries.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.compareEntries(this.entries[mid]!, entry) < 0) lo = mid + 1
      else hi = mid
    }
    if (this.entries[lo]?.id === doc._id) this.entries.splice(lo, 1)
    else this.entries = this.entries.filter((e) => e.id !== doc._id)
  }

  clear(): void {
    this.entries = []
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
    if (reverse) for (let i = to - 1; i >= from; i--) yield this.entries[i]!.id
    else for (let i = from; i < to; i++) yield this.entries[i]!.id
  }
}
