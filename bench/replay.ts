// Replay rate of the whole global log through the SQLite event store, next to raw scans of the
// same file with the driver alone.
//
//   npx tsx bench/replay.ts            (EVENTS=1000000 by default)
//   EVENTS=200000 npx tsx bench/replay.ts
//
// The log is written through the adapter itself, APPEND events per append (one commit each), to
// ACCOUNTS `credits-<account>` streams in turn: CreditsCharged-shaped data, half of the events
// with metadata, as the command handler writes them.
import { randomUUID } from 'node:crypto'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { openSqlite } from '../adapters/sqlite/database.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { START, type EventStore, type EventToAppend } from '../ports/eventStore.ts'
import { envInt, fmtInt, fmtRatio, machine, machineLoad, now, table, tempDir } from './lib.ts'

const EVENTS = envInt('EVENTS', 1_000_000)
const ACCOUNTS = envInt('ACCOUNTS', 10_000)
const APPEND = envInt('APPEND', 100)
const BATCH = envInt('BATCH', 5000)
const GOAL = 300_000
const { dir, cleanup } = tempDir('replay')
const path = join(dir, 'events.db')

async function load(): Promise<number> {
  const t0 = now()
  const store = openSqliteEventStore({ path })
  const base = Date.parse('2025-01-01T00:00:00Z')
  for (let start = 0, call = 0; start < EVENTS; start += APPEND, call++) {
    const account = `acc-${(call % ACCOUNTS).toString().padStart(6, '0')}`
    const events: EventToAppend[] = []
    for (let i = start; i < Math.min(EVENTS, start + APPEND); i++) {
      const requestId = randomUUID()
      const at = new Date(base + i).toISOString()
      events.push({
        id: randomUUID(),
        type: 'CreditsCharged',
        data: { chargeId: randomUUID(), operation: 'transcribe', cost: 1, noteId: null, requestId, balanceAfter: 25_000 - (i % 25_000), at },
        ...(i % 2 === 0 ? { metadata: { requestId } } : {}),
      })
    }
    await store.appendToStream(`credits-${account}`, events)
  }
  await store.close()
  const db = openSqlite(path, { synchronous: 'FULL' })
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  db.close()
  return (now() - t0) / 1000
}

interface Result {
  name: string
  count: number
  seconds: number
}

async function timed(name: string, run: () => Promise<number> | number): Promise<Result> {
  const t0 = now()
  const count = await run()
  const seconds = (now() - t0) / 1000
  if (count !== EVENTS) throw new Error(`${name}: read ${count} events, expected ${EVENTS}`)
  return { name, count, seconds }
}

/**
 * Baselines: one forward scan of the adapter's table with the raw driver (`iterate`, no paging,
 * no objects built): every column untouched, and the event column parsed (each event's JSON has
 * to be parsed by any reader that hands out data).
 */
async function rawScans(): Promise<Result[]> {
  const db = openSqlite(path, { synchronous: 'FULL' })
  try {
    const all = db.prepare('SELECT * FROM events ORDER BY position').raw(true)
    const bodies = db.prepare('SELECT position, body FROM events ORDER BY position').raw(true)
    return [
      await timed('raw scan, every column, no parse (baseline)', () => {
        let n = 0
        for (const r of all.iterate() as IterableIterator<unknown[]>) if (r[0] !== null) n++
        return n
      }),
      await timed('raw scan, position + JSON.parse(body) (baseline)', () => {
        let n = 0
        let sink = 0
        for (const r of bodies.iterate() as IterableIterator<[number, string]>) {
          sink += (JSON.parse(r[1]) as { data: { cost: number } }).data.cost
          n++
        }
        if (sink < 0) console.log(sink)
        return n
      }),
    ]
  } finally {
    db.close()
  }
}

async function adapterReadAll(store: EventStore, batch: number): Promise<number> {
  let n = 0
  let after = START
  let sink = 0
  for (;;) {
    const events = await store.readAll({ after, maxCount: batch })
    if (events.length === 0) break
    n += events.length
    sink += (events[0]!.data as { cost: number }).cost
    after = events[events.length - 1]!.globalPosition
  }
  if (sink < 0) console.log(sink)
  return n
}

async function adapterSubscribe(store: EventStore, batchSize?: number): Promise<number> {
  const ac = new AbortController()
  let n = 0
  for await (const e of store.subscribeToAll({ after: START, signal: ac.signal, ...(batchSize ? { batchSize } : {}) })) {
    n++
    if (e.globalPosition < 0) break
    if (n === EVENTS) ac.abort() // caught up: the whole log has been delivered
  }
  return n
}

async function main() {
  console.log(`bench/replay.ts: ${fmtInt(EVENTS)} events in ${fmtInt(ACCOUNTS)} streams`)
  console.log(`machine: ${machine()}; temp dir ${dir}`)
  console.log(`at start: ${machineLoad()}\n`)

  const loadSeconds = await load()
  console.log(
    `load through the adapter, ${APPEND} events per append: ${loadSeconds.toFixed(1)} s (${fmtInt(EVENTS / loadSeconds)} events/s), file ${(statSync(path).size / 1e6).toFixed(0)} MB\n`,
  )

  const results: Result[] = []
  results.push(...(await rawScans()))
  const store = openSqliteEventStore({ path })
  try {
    results.push(await timed(`adapter readAll, batches of ${BATCH}`, () => adapterReadAll(store, BATCH)))
    results.push(await timed('adapter subscribeToAll (default batchSize 1000)', () => adapterSubscribe(store)))
    results.push(await timed(`adapter subscribeToAll, batchSize ${BATCH}`, () => adapterSubscribe(store, BATCH)))
  } finally {
    await store.close()
  }
  // Baselines again at the end: the first pass warms the page cache for everyone, and a busy
  // machine shows up as a difference between the two passes.
  const again = await rawScans()
  results.push(...again.map((r) => ({ ...r, name: r.name.replace('(baseline)', '(again)') })))

  const parsedBaseline = Math.max(results[1]!.count / results[1]!.seconds, again[1]!.count / again[1]!.seconds)
  table(
    ['reader', 'seconds', 'events/s', 'vs raw+parse', 'goal 300k/s'],
    results.map((r) => {
      const rate = r.count / r.seconds
      return [r.name, r.seconds.toFixed(2), fmtInt(rate), fmtRatio(rate / parsedBaseline), rate >= GOAL ? 'yes' : 'NO']
    }),
  )
  console.log(`\n"vs raw+parse" compares with the faster of the two raw scans that parse the JSON (${fmtInt(parsedBaseline)} events/s).`)
  console.log('The adapter readers build complete RecordedEvent objects (data and metadata parsed).')
}

try {
  await main()
  console.log(`at end: ${machineLoad()}`)
} finally {
  cleanup()
}
