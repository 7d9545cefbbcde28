// The shared rate-limit store (several API processes counting against one limit) takes places
// from the shared count in blocks: one round trip per block instead of one per request (on
// FerretDB a counter round trip took ~200 ms under load, the largest per-request cost of a
// create in the scale benchmark). The limit still holds across processes, and a small limit is
// still counted one request at a time.
import t from 'tap'
import { sharedStore } from '../api/http/rateLimit.ts'
import type { CounterStore } from '../ports/counterStore.ts'

function countingCounters() {
  const counts = new Map<string, number>()
  const c = {
    trips: 0,
    async increment(key: string, _windowMs: number, by = 1) {
      c.trips++
      await new Promise((r) => setTimeout(r, 2))
      const n = (counts.get(key) ?? 0) + by
      counts.set(key, n)
      return { count: n, ttlMs: 60_000 }
    },
  }
  return c satisfies CounterStore
}

type Store = { incr(key: string, cb: (err: Error | null, res?: { current: number; ttl: number }) => void, windowMs: number, max: number): void }
const instance = (store: ReturnType<typeof sharedStore>) => new (store as unknown as new () => Store)()
const incr = (s: Store, key: string, max: number) => new Promise<number>((resolve, reject) => s.incr(key, (err, r) => (err ? reject(err) : resolve(r!.current)), 60_000, max))

t.test('given a limit of 6400, when 200 requests come at once, then all pass with distinct places and the shared count is asked once or twice', async (t) => {
  const counters = countingCounters()
  const s = instance(sharedStore(counters, 'rest'))
  const places = await Promise.all(Array.from({ length: 200 }, () => incr(s, 'key-1', 6400)))
  t.equal(new Set(places).size, 200, 'each request has its own place')
  t.ok(places.every((p) => p <= 6400))
  t.ok(counters.trips <= 2, `${counters.trips} round trips for 200 requests`)
})

t.test('given two processes and a limit of 640, then exactly 640 requests pass across them, and past the limit no round trip is made', async (t) => {
  const counters = countingCounters()
  const a = instance(sharedStore(counters, 'rest'))
  const b = instance(sharedStore(counters, 'rest'))
  const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => incr(i % 2 ? a : b, 'key-2', 640)))
  t.equal(results.filter((p) => p <= 640).length, 640, 'the limit holds across both')
  const trips = counters.trips
  await Promise.all(Array.from({ length: 100 }, (_, i) => incr(i % 2 ? a : b, 'key-2', 640)))
  t.equal(counters.trips, trips, 'a process that saw the limit reached refuses from memory')
})

t.test('given a limit of 6, then each request is counted in the shared store (exact)', async (t) => {
  const counters = countingCounters()
  const a = instance(sharedStore(counters, 'rest'))
  const b = instance(sharedStore(counters, 'rest'))
  const places: number[] = []
  for (let i = 0; i < 8; i++) places.push(await incr(i % 2 ? a : b, 'key-3', 6))
  t.same(places, [1, 2, 3, 4, 5, 6, 7, 8])
  t.equal(counters.trips, 8)
})
