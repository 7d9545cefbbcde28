// MongoDB query, update, sort and projection semantics over plain JSON documents, for the
// embedded document store. Pure functions: no storage here.
import type { Doc, Filter, SortSpec, Update } from '../../ports/documentStore.ts'

type Json = unknown
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isOperatorObject = (v: unknown): v is Record<string, unknown> => isPlainObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith('$'))

// ---- values: order and equality as in BSON ---------------------------------------------------

/** BSON type order: null/missing < numbers < strings < objects < arrays < booleans. */
function typeRank(v: Json): number {
  if (v === undefined || v === null) return 1
  if (typeof v === 'number') return 2
  if (typeof v === 'string') return 3
  if (Array.isArray(v)) return 5
  if (typeof v === 'object') return 4
  if (typeof v === 'boolean') return 6
  return 7
}

export function compareValues(a: Json, b: Json): number {
  const ra = typeRank(a)
  const rb = typeRank(b)
  if (ra !== rb) return ra - rb
  switch (ra) {
    case 1:
      return 0
    case 2:
      return (a as number) - (b as number)
    case 3:
      return a === b ? 0 : (a as string) < (b as string) ? -1 : 1
    case 6:
      return Number(a) - Number(b)
    case 5: {
      const x = a as Json[]
      const y = b as Json[]
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i])
        if (c !== 0) return c
      }
      return x.length - y.length
    }
    default: {
      const ea = Object.entries(a as object)
      const eb = Object.entries(b as object)
      for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
        const [ka, va] = ea[i]!
        const [kb, vb] = eb[i]!
        if (ka !== kb) return ka < kb ? -1 : 1
        const c = compareValues(va, vb)
        if (c !== 0) return c
      }
      return ea.length - eb.length
    }
  }
}

export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]))
  }
  return false
}

// ---- paths ------------------------------------------------------------------------------------

/**
 * Every value a dotted path reaches, descending into arrays of documents as MongoDB does.
 * `undefined` stands for a missing field.
 */
export function valuesAt(doc: Json, path: string): Json[] {
  return walk(doc, path.split('.'), 0)
}

function walk(value: Json, parts: string[], i: number): Json[] {
  if (i === parts.length) return [value]
  const key = parts[i]!
  if (Array.isArray(value)) {
    if (/^\d+$/.test(key)) return walk(value[Number(key)], parts, i + 1)
    const out: Json[] = []
    for (const el of value) if (isPlainObject(el) || Array.isArray(el)) out.push(...walk(el, parts, i))
    return out.length ? out : [undefined]
  }
  if (isPlainObject(value)) return walk(value[key], parts, i + 1)
  return [undefined]
}

export function getPath(doc: Json, path: string): Json {
  let v: Json = doc
  for (const p of path.split('.')) {
    if (!isPlainObject(v) && !Array.isArray(v)) return undefined
    v = (v as Record<string, Json>)[p]
  }
  return v
}

function setPath(doc: Record<string, Json>, path: string, value: Json): void {
  const parts = path.split('.')
  let cur: Record<string, Json> = doc
  for (const p of parts.slice(0, -1)) {
    const next = cur[p]
    if (!isPlainObject(next) && !Array.isArray(next)) cur[p] = {}
    cur = cur[p] as Record<string, Json>
  }
  cur[parts[parts.length - 1]!] = value
}

function unsetPath(doc: Record<string, Json>, path: string): void {
  const parts = path.split('.')
  let cur: Json = doc
  for (const p of parts.slice(0, -1)) {
    if (!isPlainObject(cur)) return
    cur = cur[p]
  }
  if (isPlainObject(cur)) delete cur[parts[parts.length - 1]!]
}

// ---- matching ----------------------------------------------------------------------------------

export function matches(doc: Json, filter: Filter): boolean {
  for (const [key, cond] of Object.entries(filter)) {
    switch (key) {
      case '$and':
        if (!(cond as Filter[]).every((f) => matches(doc, f))) return false
        break
      case '$or':
        if (!(cond as Filter[]).some((f) => matches(doc, f))) return false
        break
      case '$nor':
        if ((cond as Filter[]).some((f) => matches(doc, f))) return false
        break
      default:
        if (!matchesField(valuesAt(doc, key), cond)) return false
    }
  }
  return true
}

/** Values plus the elements of array values: what equality and comparisons look at. */
const expand = (values: Json[]): Json[] => values.flatMap((v) => (Array.isArray(v) ? [v, ...v] : [v]))

function matchesField(values: Json[], cond: Json): boolean {
  if (isOperatorObject(cond)) {
    return Object.entries(cond).every(([op, arg]) => op === '$options' || applyOperator(values, op, arg, cond))
  }
  return equalsAny(values, cond)
}

function equalsAny(values: Json[], target: Json): boolean {
  if (target === null) return expand(values).some((v) => v === null || v === undefined)
  return expand(values).some((v) => deepEqual(v, target))
}

function applyOperator(values: Json[], op: string, arg: Json, all: Record<string, unknown>): boolean {
  switch (op) {
    case '$eq':
      return equalsAny(values, arg)
    case '$ne':
      return !equalsAny(values, arg)
    case '$gt':
      return compareAny(values, arg, (c) => c > 0)
    case '$gte':
      return compareAny(values, arg, (c) => c >= 0)
    case '$lt':
      return compareAny(values, arg, (c) => c < 0)
    case '$lte':
      return compareAny(values, arg, (c) => c <= 0)
    case '$in':
      return (arg as Json[]).some((a) => equalsAny(values, a))
    case '$nin':
      return !(arg as Json[]).some((a) => equalsAny(values, a))
    case '$all':
      return (arg as Json[]).length > 0 && (arg as Json[]).every((a) => equalsAny(values, a))
    case '$exists':
      return values.some((v) => v !== undefined) === Boolean(arg)
    case '$size':
      return values.some((v) => Array.isArray(v) && v.length === arg)
    case '$not':
      return !matchesField(values, arg)
    case '$regex': {
      const re = arg instanceof RegExp ? arg : new RegExp(String(arg), typeof all.$options === 'string' ? all.$options : '')
      return expand(values).some((v) => typeof v === 'string' && re.test(v))
    }
    case '$elemMatch':
      return values.some(
        (v) =>
          Array.isArray(v) &&
          v.some((el) => (isOperatorObject(arg) ? matchesField([el], arg) : isPlainObject(el) && matches(el, arg as Filter))),
      )
    default:
      throw new Error(`unsupported query operator ${op}`)
  }
}

function compareAny(values: Json[], arg: Json, ok: (c: number) => boolean): boolean {
  const rank = typeRank(arg)
  return expand(values).some((v) => v !== undefined && typeRank(v) === rank && ok(compareValues(v, arg)))
}

// ---- sorting and projection --------------------------------------------------------------------

/** The value a sort key uses: arrays sort by their smallest (ascending) or largest element. */
function sortValue(doc: Json, path: string, dir: 1 | -1): Json {
  const v = getPath(doc, path)
  if (!Array.isArray(v) || v.length === 0) return v
  return v.reduce((best, x) => (compareValues(x, best) * dir < 0 ? x : best))
}

export function sortComparator(sort: SortSpec): (a: Doc, b: Doc) => number {
  const keys = Object.entries(sort)
  return (a, b) => {
    for (const [path, dir] of keys) {
      const c = compareValues(sortValue(a, path, dir), sortValue(b, path, dir))
      if (c !== 0) return c * dir
    }
    return 0
  }
}

/**
 * A deep copy of a JSON value. Documents here are JSON (they are stored as JSON text), and this
 * is several times faster than structuredClone on the small documents read models hold.
 */
export function cloneJson<V>(v: V): V {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) {
    const out = new Array(v.length)
    for (let i = 0; i < v.length; i++) out[i] = cloneJson(v[i])
    return out as V
  }
  const out: Record<string, unknown> = {}
  for (const k in v) out[k] = cloneJson((v as Record<string, unknown>)[k])
  return out as V
}

/** A copy of `doc` holding only the projected fields (the whole document without a projection). */
export function projectCopy<T extends Doc>(doc: T, projection?: Record<string, 1>): T {
  if (!projection) return cloneJson(doc)
  const out: Record<string, Json> = { _id: doc._id }
  for (const path in projection) {
    // Top-level fields are most projections; they need no path walking.
    if (!path.includes('.')) {
      const v = (doc as Record<string, Json>)[path]
      if (v !== undefined) out[path] = cloneJson(v)
      continue
    }
    const v = getPath(doc, path)
    if (v !== undefined) setPath(out, path, cloneJson(v))
  }
  return out as T
}

// ---- updates ------------------------------------------------------------------------------------

/** Applies an update to a copy of `doc`. `inserting` enables $setOnInsert. */
export function applyUpdate<T extends Doc>(doc: T, update: Update, inserting: boolean): T {
  const out = cloneJson(doc) as Record<string, Json>
  for (const [op, fields] of Object.entries(update)) {
    for (const [path, arg] of Object.entries(fields ?? {})) {
      if (path === '_id' && op !== '$setOnInsert' && !(op === '$set' && deepEqual(arg, doc._id))) throw new Error('_id cannot be changed')
      applyField(out, op, path, arg, inserting)
    }
  }
  return out as T
}

const eachOf = (arg: Json): Json[] => (isPlainObject(arg) && '$each' in arg ? (arg.$each as Json[]) : [arg])

function arrayAt(doc: Record<string, Json>, path: string, op: string): Json[] {
  const cur = getPath(doc, path)
  if (cur === undefined) return []
  if (!Array.isArray(cur)) throw new Error(`${op} needs an array at ${path}`)
  return cur
}

function applyField(doc: Record<string, Json>, op: string, path: string, arg: Json, inserting: boolean): void {
  switch (op) {
    case '$set':
      return setPath(doc, path, cloneJson(arg))
    case '$setOnInsert':
      if (inserting) setPath(doc, path, cloneJson(arg))
      return
    case '$unset':
      return unsetPath(doc, path)
    case '$inc': {
      const cur = getPath(doc, path)
      if (cur !== undefined && typeof cur !== 'number') throw new Error(`$inc needs a number at ${path}`)
      return setPath(doc, path, ((cur as number | undefined) ?? 0) + (arg as number))
    }
    case '$max':
    case '$min': {
      const cur = getPath(doc, path)
      const c = compareValues(arg, cur)
      if (cur === undefined || (op === '$max' ? c > 0 : c < 0)) setPath(doc, path, cloneJson(arg))
      return
    }
    case '$push':
      return setPath(doc, path, [...arrayAt(doc, path, op), ...cloneJson(eachOf(arg))])
    case '$addToSet': {
      const next = [...arrayAt(doc, path, op)]
      for (const v of eachOf(arg)) if (!next.some((x) => deepEqual(x, v))) next.push(cloneJson(v))
      return setPath(doc, path, next)
    }
    case '$pull': {
      const cur = getPath(doc, path)
      if (!Array.isArray(cur)) return
      const remove = (el: Json) =>
        isOperatorObject(arg) ? matchesField([el], arg) : isPlainObject(arg) && isPlainObject(el) ? matches(el, arg as Filter) : deepEqual(el, arg)
      return setPath(doc, path, cur.filter((el) => !remove(el)))
    }
    default:
      throw new Error(`unsupported update operator ${op}`)
  }
}

/** The document an upsert starts from: the filter's equality conditions. */
export function seedFromFilter(filter: Filter): Record<string, Json> {
  const doc: Record<string, Json> = {}
  for (const [key, cond] of Object.entries(filter)) {
    if (key === '$and') for (const f of cond as Filter[]) Object.assign(doc, seedFromFilter(f))
    if (key.startsWith('$')) continue
    if (!isOperatorObject(cond)) setPath(doc, key, cloneJson(cond))
    else if ('$eq' in cond) setPath(doc, key, cloneJson(cond.$eq))
  }
  return doc
}

/** Top-level equality conditions on scalar values: what an index can look up. */
export function equalityBindings(filter: Filter): Map<string, Json> {
  const out = new Map<string, Json>()
  for (const [key, cond] of Object.entries(filter)) {
    if (key.startsWith('$')) continue
    const v = isOperatorObject(cond) ? ('$eq' in cond ? cond.$eq : undefined) : cond
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out.set(key, v)
  }
  return out
}
