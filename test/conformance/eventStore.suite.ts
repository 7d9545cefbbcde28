// One conformance suite for every EventStore adapter. Every test writes to streams of a fresh
// random category, so the suite also runs against a shared, non-empty server (a real
// EventStoreDB through ESDB_URL).
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import {
  START,
  WrongExpectedRevisionError,
  type EventStore,
  type EventToAppend,
  type RecordedEvent,
} from '../../ports/eventStore.ts'

export type EventStoreFactory = () => Promise<{ store: EventStore; cleanup: () => Promise<void> }>

const freshCategory = () => 'c' + randomUUID().replace(/-/g, '').slice(0, 12)
const ev = (type: string, data: Record<string, unknown> = {}, metadata?: Record<string, unknown>): EventToAppend => ({
  id: randomUUID(),
  type,
  data,
  ...(metadata ? { metadata } : {}),
})

async function collect(iter: AsyncIterable<RecordedEvent>, n: number, timeoutMs = 5000): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = []
  const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${out.length}/${n} events`)), timeoutMs).unref())
  const run = (async () => {
    for await (const e of iter) {
      out.push(e)
      if (out.length >= n) break
    }
    return out
  })()
  return Promise.race([run, timer])
}

export function eventStoreConformance(t: Test, name: string, factory: EventStoreFactory): void {
  t.test(`EventStore conformance: ${name}`, async (t) => {
    const { store, cleanup } = await factory()
    t.teardown(cleanup)

    t.test('given no stream, when appending with no_stream, then revisions start at 0 and read back in order', async (t) => {
      const s = `${freshCategory()}-1`
      const batch = [ev('NoteCreated', { title: 'héllo ✓', n: 1 }, { requestId: 'r1' }), ev('NoteRenamed', { title: 'b' })]
      const res = await store.appendToStream(s, batch, { expectedRevision: 'no_stream' })
      t.equal(res.nextExpectedRevision, 1)
      const read = await store.readStream(s)
      t.equal(read.streamExists, true)
      t.equal(read.currentRevision, 1)
      t.same(
        read.events.map((e) => [e.id, e.type, e.revision, e.streamName, e.data, e.metadata]),
        [
          [batch[0]!.id, 'NoteCreated', 0, s, { title: 'héllo ✓', n: 1 }, { requestId: 'r1' }],
          [batch[1]!.id, 'NoteRenamed', 1, s, { title: 'b' }, {}],
        ],
      )
      t.ok(read.events[0]!.globalPosition < read.events[1]!.globalPosition, 'global positions increase')
      t.equal(res.lastGlobalPosition, read.events[1]!.globalPosition)
      t.match(read.events[0]!.recordedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
    })

    t.test('given a missing stream, when reading it, then it does not exist', async (t) => {
      const read = await store.readStream(`${freshCategory()}-missing`)
      t.same(read, { events: [], currentRevision: -1, streamExists: false })
    })

    t.test('expected revision rules', async (t) => {
      const s = `${freshCategory()}-1`
      await t.rejects(store.appendToStream(s, [ev('A')], { expectedRevision: 'stream_exists' }), WrongExpectedRevisionError)
      await t.rejects(store.appendToStream(s, [ev('A')], { expectedRevision: 0 }), WrongExpectedRevisionError)
      await store.appendToStream(s, [ev('A')], { expectedRevision: 'no_stream' })
      const err = await store.appendToStream(s, [ev('B')], { expectedRevision: 'no_stream' }).catch((e: unknown) => e)
      t.type(err, WrongExpectedRevisionError)
      t.equal((err as WrongExpectedRevisionError).actual, 0, 'error carries the actual revision')
      await t.rejects(store.appendToStream(s, [ev('B')], { expectedRevision: 5 }), WrongExpectedRevisionError)
      t.equal((await store.appendToStream(s, [ev('B')], { expectedRevision: 0 })).nextExpectedRevision, 1)
      t.equal((await store.appendToStream(s, [ev('C')], { expectedRevision: 'stream_exists' })).nextExpectedRevision, 2)
      t.equal((await store.appendToStream(s, [ev('D')], { expectedRevision: 'any' })).nextExpectedRevision, 3)
      t.equal((await store.appendToStream(s, [ev('E')])).nextExpectedRevision, 4, 'default is any')
      const read = await store.readStream(s)
      t.same(read.events.map((e) => e.type), ['A', 'B', 'C', 'D', 'E'], 'rejected appends wrote nothing')
    })

    t.test('given a stored batch, when the same event ids are appended again, then nothing is written', async (t) => {
      const s = `${freshCategory()}-1`
      const batch = [ev('A'), ev('B')]
      const first = await store.appendToStream(s, batch, { expectedRevision: 'no_stream' })
      const retry = await store.appendToStream(s, batch, { expectedRevision: 'no_stream' })
      t.equal(retry.nextExpectedRevision, first.nextExpectedRevision)
      t.equal(retry.lastGlobalPosition, first.lastGlobalPosition)
      const retryAny = await store.appendToStream(s, batch, { expectedRevision: 'any' })
      t.equal(retryAny.nextExpectedRevision, 1)
      t.equal((await store.readStream(s)).events.length, 2)
    })

    t.test('readStream honours from and maxCount', async (t) => {
      const s = `${freshCategory()}-1`
      await store.appendToStream(s, [0, 1, 2, 3, 4].map((i) => ev('N', { i })))
      const part = await store.readStream(s, { from: 2, maxCount: 2 })
      t.same(part.events.map((e) => e.data.i), [2, 3])
      t.equal(part.currentRevision, 4)
      t.same((await store.readStream(s, { from: 5 })).events, [])
    })

    t.test('given concurrent appends at the same expected revision, exactly one wins', async (t) => {
      const s = `${freshCategory()}-1`
      await store.appendToStream(s, [ev('Opened')], { expectedRevision: 'no_stream' })
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.appendToStream(s, [ev('Raced', { i })], { expectedRevision: 0 })),
      )
      t.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
      for (const r of results) if (r.status === 'rejected') t.type(r.reason, WrongExpectedRevisionError)
      t.equal((await store.readStream(s)).events.length, 2)
    })

    t.test('readAll goes forward from an exclusive position with category and type filters', async (t) => {
      const cat = freshCategory()
      const other = freshCategory()
      await store.appendToStream(`${cat}-a`, [ev('X', { k: 1 }), ev('Y', { k: 2 })])
      await store.appendToStream(`${other}-a`, [ev('X', { k: 3 })])
      await store.appendToStream(`${cat}-b`, [ev('X', { k: 4 })])
      const mine = await store.readAll({ filter: { categories: [cat] } })
      t.same(mine.map((e) => e.data.k), [1, 2, 4])
      for (let i = 1; i < mine.length; i++) t.ok(mine[i]!.globalPosition > mine[i - 1]!.globalPosition)
      const afterFirst = await store.readAll({ after: mine[0]!.globalPosition, filter: { categories: [cat] } })
      t.same(afterFirst.map((e) => e.data.k), [2, 4])
      const onlyX = await store.readAll({ filter: { categories: [cat, other], eventTypes: ['X'] } })
      t.same(onlyX.map((e) => e.data.k), [1, 3, 4])
      const limited = await store.readAll({ filter: { categories: [cat] }, maxCount: 2 })
      t.same(limited.map((e) => e.data.k), [1, 2])
      const all = await store.readAll({ after: START, maxCount: 1_000_000 })
      t.ok(all.some((e) => e.streamName === `${other}-a`), 'unfiltered readAll includes every category')
    })

    t.test('subscribeToAll catches up, then delivers live appends, filtered, until aborted', async (t) => {
      const cat = freshCategory()
      await store.appendToStream(`${cat}-1`, [ev('Before', { i: 0 })])
      await store.appendToStream(`${freshCategory()}-1`, [ev('Before', { i: -1 })])
      const ac = new AbortController()
      const sub = store.subscribeToAll({ filter: { categories: [cat] }, signal: ac.signal })
      const got = collect(sub, 4)
      await new Promise((r) => setTimeout(r, 50))
      await store.appendToStream(`${cat}-1`, [ev('Live', { i: 1 })])
      await store.appendToStream(`${cat}-2`, [ev('Live', { i: 2 }), ev('Live', { i: 3 })])
      const events = await got
      t.same(events.map((e) => e.data.i), [0, 1, 2, 3])
      ac.abort()

      const ac2 = new AbortController()
      const from = events[1]!.globalPosition
      const resumed = await collect(store.subscribeToAll({ after: from, filter: { categories: [cat], eventTypes: ['Live'] }, signal: ac2.signal }), 2)
      t.same(resumed.map((e) => e.data.i), [2, 3], 'resumes after the given position')
      ac2.abort()

      const ac3 = new AbortController()
      const ended = (async () => {
        let n = 0
        for await (const _ of store.subscribeToAll({ filter: { categories: [freshCategory()] }, signal: ac3.signal })) n++
        return n
      })()
      setTimeout(() => ac3.abort(), 50)
      t.equal(await ended, 0, 'abort ends an idle subscription')
    })

    t.test('many events read back through the global log in commit order', async (t) => {
      const cat = freshCategory()
      const streams = 5
      const perStream = 40
      await Promise.all(
        Array.from({ length: streams }, async (_, s) => {
          for (let i = 0; i < perStream; i += 4) {
            await store.appendToStream(`${cat}-${s}`, [0, 1, 2, 3].map((j) => ev('N', { s, i: i + j })))
          }
        }),
      )
      const all = await store.readAll({ filter: { categories: [cat] } })
      t.equal(all.length, streams * perStream)
      for (let s = 0; s < streams; s++) {
        t.same(
          all.filter((e) => e.data.s === s).map((e) => e.data.i),
          Array.from({ length: perStream }, (_, i) => i),
          `stream ${s} keeps its order in the global log`,
        )
      }
    })
  })
}
