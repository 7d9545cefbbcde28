// Content keys (ports/contentKeys.ts) in a document store (MongoDB at scale): the keys every
// process of a deployment must share, whichever host it runs on. On one host the SQLite file
// (adapters/sqlite/contentKeys.ts) does; processes on several hosts share only the configured
// stores, so the keys live in one. A database of their own, never the read models' (app/infrastructure.ts):
// the read models are rebuilt from the log and may be dropped, the keys cannot be rebuilt from anything.
//
// Same rules as the SQLite store: the first key stored for an id wins (an insert-if-absent, so two
// processes creating the first key of one note both read the one that won), a shredded id keeps a
// tombstone and never gets a new key, and ids are issued with keys made ahead in one write.
import { randomBytes, randomUUID } from 'node:crypto'
import type { ContentKey, ContentKeyStore } from '../../ports/contentKeys.ts'
import type { Collection, Doc, DocumentStore } from '../../ports/documentStore.ts'

/** Keys made ahead for `issueId`: a new batch in one write when fewer than POOL_LOW are left. */
const POOL_BATCH = 256
const POOL_LOW = 64

/** `batch`: the ids made ahead in one write share it (see `prefetched` below); null for the others. */
export type ContentKeyDoc = Doc & { _id: string; key: string | null; shreddedAt: string | null; batch?: string | null }

export const CONTENT_KEYS_COLLECTION = 'content_keys'
export const KEY_BATCHES_COLLECTION = 'content_key_batches'
type KeyBatchDoc = Doc & { _id: string; keys: Record<string, string> }

const asKey = (doc: ContentKeyDoc | null | undefined): ContentKey => {
  if (!doc) return { kind: 'none' }
  if (doc.shreddedAt || !doc.key) return { kind: 'shredded' }
  return { kind: 'key', key: Buffer.from(doc.key, 'base64') }
}
const fresh = (id: string, batch: string | null = null): ContentKeyDoc => ({ _id: id, key: randomBytes(32).toString('base64'), shreddedAt: null, batch })

/**
 * How long keys fetched with another one's batch are used without asking again: the bound the
 * event store's own key cache already puts on seeing another process's shred (1 s).
 */
const PREFETCH_MS = 1000

/**
 * `store` is owned by the key store: `close()` closes it. `store.eraseFreedSpace` (the embedded
 * store) runs after each shred; MongoDB manages its files itself (docs/container-image.md says
 * what that means for a destroyed key).
 */
export function documentContentKeys(store: DocumentStore): ContentKeyStore {
  const keys: Collection<ContentKeyDoc> = store.collection<ContentKeyDoc>(CONTENT_KEYS_COLLECTION)
  // The keys of one batch made ahead also in one document, read by `_id` (FerretDB scans the
  // collection for any other filter: 200 ms for 256 keys by a `batch` field, against 4 ms for one).
  const batches: Collection<KeyBatchDoc> = store.collection<KeyBatchDoc>(KEY_BATCHES_COLLECTION)
  // A process that opens notes others created (the projections) would ask for each new note's key
  // once: a round trip per note (4 ms on FerretDB, ~140 notes/s). The keys of one batch made ahead
  // belong to the notes one process creates next, so the first miss in a batch fetches the batch.
  // Used for reads only (`create: false`): sealing always asks the store.
  const prefetched = new Map<string, { doc: ContentKeyDoc; until: number }>()
  const lookUp = async (id: string): Promise<ContentKey> => {
    const hit = prefetched.get(id)
    if (hit && hit.until > Date.now()) return asKey(hit.doc)
    const doc = await keys.findOne({ _id: id })
    if (doc?.batch && doc.key) {
      const batch = await batches.findOne({ _id: doc.batch })
      if (prefetched.size > 10_000) prefetched.clear()
      const until = Date.now() + PREFETCH_MS
      for (const [other, key] of Object.entries(batch?.keys ?? {})) prefetched.set(other, { doc: { _id: other, key, shreddedAt: null }, until })
    }
    return asKey(doc)
  }
  // Group commit: the first keys asked for during one turn of the event loop go in one write and
  // come back in one read, as the SQLite store batches them into one transaction.
  let pending: { id: string; resolve: (k: ContentKey) => void; reject: (err: unknown) => void }[] = []
  const flush = async () => {
    const batch = pending
    pending = []
    try {
      await keys.insertManyIfAbsent(batch.map((p) => fresh(p.id)))
      const stored = new Map((await keys.find({ _id: { $in: batch.map((p) => p.id) } })).map((d) => [d._id, d]))
      for (const p of batch) p.resolve(asKey(stored.get(p.id)))
    } catch (err) {
      for (const p of batch) p.reject(err)
    }
  }
  // Ids with keys made ahead. Random ids, so processes sharing the store never hand out the same one.
  const pool: ContentKeyDoc[] = []
  // The key of an id just handed out, for its note's first event (see the SQLite store).
  const issued = new Map<string, Buffer>()
  let refilling: Promise<void> | null = null
  const refill = (): Promise<void> =>
    (refilling ??= (async () => {
      const batch = randomUUID()
      const made = Array.from({ length: POOL_BATCH }, () => fresh(randomUUID(), batch))
      await batches.insertOne({ _id: batch, keys: Object.fromEntries(made.map((m) => [m._id, m.key!])) })
      await keys.insertMany(made)
      pool.push(...made)
    })().finally(() => {
      refilling = null
    }))
  return {
    async issueId() {
      while (pool.length === 0) await refill()
      const { _id, key } = pool.pop()!
      if (pool.length < POOL_LOW) refill().catch(() => {})
      if (issued.size >= POOL_BATCH) issued.delete(issued.keys().next().value!)
      issued.set(_id, Buffer.from(key!, 'base64'))
      return _id
    },
    async key(id, { create }) {
      const made = issued.get(id)
      if (made) {
        issued.delete(id)
        return { kind: 'key', key: made }
      }
      if (!create) return lookUp(id)
      const found = asKey(await keys.findOne({ _id: id }))
      if (found.kind !== 'none') return found
      return new Promise<ContentKey>((resolve, reject) => {
        pending.push({ id, resolve, reject })
        if (pending.length === 1) setImmediate(() => void flush())
      })
    },
    async shred(id) {
      issued.delete(id)
      prefetched.delete(id)
      // Out of its batch's document first: from then on no process prefetches it.
      const doc = await keys.findOne({ _id: id })
      if (doc?.batch) await batches.updateOne({ _id: doc.batch }, { $unset: { [`keys.${id}`]: '' } })
      await keys.replaceOne({ _id: id }, { _id: id, key: null, shreddedAt: new Date().toISOString() }, { upsert: true })
      await store.eraseFreedSpace?.()
    },
    async close() {
      if (pending.length > 0) await flush()
      await refilling?.catch(() => {})
      // The ids never handed out name no note: their keys go with the process.
      const unused = pool.splice(0)
      try {
        if (unused.length > 0) {
          await keys.deleteMany({ _id: { $in: unused.map((d) => d._id) } })
          for (const b of new Set(unused.map((d) => d.batch))) {
            if (b) await batches.updateOne({ _id: b }, { $unset: Object.fromEntries(unused.filter((d) => d.batch === b).map((d) => [`keys.${d._id}`, ''])) })
          }
        }
      } finally {
        await store.close()
      }
    },
  }
}

/**
 * Carries keys kept elsewhere before (a SQLite keys file) into `store`, once: keys go in where the
 * id has none yet, tombstones always win (a destroyed key stays destroyed). Marked done in the
 * store, so later starts skip it. Answers how many rows were carried, or null when already done.
 */
export async function importContentKeys(store: DocumentStore, source: string, rows: () => { id: string; key: Buffer | null; shreddedAt: string | null }[]): Promise<number | null> {
  const imports = store.collection<Doc & { at: string; count: number }>('content_key_imports')
  if (await imports.findOne({ _id: source })) return null
  const all = rows()
  const keys = store.collection<ContentKeyDoc>(CONTENT_KEYS_COLLECTION)
  for (let i = 0; i < all.length; i += 1000) {
    await keys.insertManyIfAbsent(all.slice(i, i + 1000).filter((r) => r.key && !r.shreddedAt).map((r) => ({ _id: r.id, key: r.key!.toString('base64'), shreddedAt: null })))
  }
  for (const r of all) if (r.shreddedAt || !r.key) await keys.replaceOne({ _id: r.id }, { _id: r.id, key: null, shreddedAt: r.shreddedAt ?? new Date().toISOString() }, { upsert: true })
  await imports.insertManyIfAbsent([{ _id: source, at: new Date().toISOString(), count: all.length }])
  return all.length
}
