// The CounterStore on the read-model store: one document per key and window in `_counters`,
// incremented with an upsert ($inc is atomic per document on MongoDB), with a TTL index on
// `expiresAt` so old windows go by themselves. Used when several API processes share MongoDB
// (MONGO_URL); on the embedded default one process serves, and the counters stay in memory.
import type { CounterStore } from '../ports/counterStore.ts'
import { DuplicateKeyError, type DocumentStore } from '../ports/documentStore.ts'

export const COUNTERS = '_counters'
type CounterDoc = { _id: string; count: number; expiresAt: Date }

export function documentCounters(docs: DocumentStore): CounterStore {
  const c = docs.collection<CounterDoc>(COUNTERS)
  const ready = c.createIndex({ keys: { expiresAt: 1 }, name: 'expiresAt_ttl', expireAfterSeconds: 0 }).catch(() => {})
  return {
    async increment(key, windowMs, by = 1) {
      await ready
      const now = Date.now()
      const start = Math.floor(now / windowMs) * windowMs
      const id = `${key}|${start}`
      // A minute's grace past the window, so a clock a little behind still finds its count.
      const update = { $inc: { count: by }, $setOnInsert: { expiresAt: new Date(start + windowMs + 60_000) } }
      try {
        await c.updateOne({ _id: id }, update, { upsert: true })
      } catch (err) {
        // Two processes inserting the same new window at once: one wins, the other increments it.
        if (!(err instanceof DuplicateKeyError)) throw err
        await c.updateOne({ _id: id }, update)
      }
      const doc = await c.findOne({ _id: id })
      return { count: doc?.count ?? by, ttlMs: start + windowMs - now }
    },
  }
}
