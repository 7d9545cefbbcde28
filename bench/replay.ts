// Replay rate of the whole global log through the SQLite event store against raw scans.
//
//   npx tsx bench/replay.ts            (EVENTS=1000000 by default)
//   EVENTS=200000 npx tsx bench/replay.ts
//
// The log is written fast: the adapter creates its schema, is closed, the rows are bulk inserted
// with the raw driver in big transactions, and the adapter is opened again for reading.
// Events look like the credit ledger's: 10,000 `credits-<account>` streams written round-robin,
// CreditsCharged-shaped data, half of them with metadata, as the command handler stores them.
import { randomUUID } from 'node:crypto'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { openSqlite } from '../adapters/sqlite/database.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { START, type EventStore } from '../ports/eventStore.ts'
import { envInt, fmtInt, fmtRatio, machine, now, table, tempDir } from './lib.ts'

const EVENTS = envInt('EVENTS', 1_000_000)
const ACCOUNTS = envInt('ACCOUNTS', 10_000)
const BATCH = envInt('BATCH', 5000)
const GOAL = 300_000
const { dir, cleanup } = tempDir('replay')
const path = join(dir, 'events.db')

function bulkLoad(): number {
  const t0 = now()
  const db = openSqlite(path, { synchronous: 'FULL' })
  // Loading only (the readers below use the adapter's settings): no fsync, and a page cache big
  // enough to hold the random-UUID index so inserts do not thrash.
  db.exec('PRAGMA synchronous = OFF')
  db.exec('PRAGMA cache_size = -1000000')
  const insert = db.prepare(
    'INSERT INTO events (id, stream, category, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const base = Date.parse('2025-01-01T00:00:00Z')
  const CHUNK = 50_000
  for (let start = 0; start < EVENTS; start += CHUNK) {
    db.exec('BEGIN')
    for (let i = start; i < Math.min(EVENTS, start + CHUNK); i++) {
      const account = `acc-${(i % ACCOUNTS).toString().padStart(6, '0')}`
      const revision = Math.floor(i / ACCOUNTS)
      const at = new Date(base + i).toISOString()
      const requestId = randomUUID()
      const data = { chargeId: randomUUID(), operation: 'transcribe', cost: 1, noteId: null, requestId, balanceAfter: 25_000 - revision, at }
      insert.run(randomUUID(), `credits-${account}`, 'credits', revision, 'CreditsCharged', JSON.stringify(data), i % 2 === 0 ? JSON.stringify({ requestId }) : null, at)
    }
    db.exec('COMMIT')
  }
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

const COLUMNS = 'position, id, stream, revision, type, data, metadata, recorded_at'
type Row = [number, string, string, number, string, string, string | null, string]

function rawScans(): Promise<Result[]> {
  const db = openSqlite(path, { synchronous: 'FULL' })
  const scan = db.prepare(`SELECT ${COLUMNS} FROM events ORDER BY position`).raw(true)
  const page = db.prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`).raw(true)
  const results = (async () => [
    await timed('raw scan, iterate, no JSON.parse (baseline)', () => {
      let n = 0
      for (const r of scan.iterate() as IterableIterator<Row>) if (r[0] > 0) n++
      return n
    }),
    await timed('raw scan, iterate, JSON.parse data+metadata (baseline)', () => {
      let n = 0
      let sink = 0
      for (const r of scan.iterate() as IterableIterator<Row>) {
        const data = JSON.parse(r[5]) as { cost: number }
        const meta = r[6] === null ? {} : (JSON.parse(r[6]) as object)
        sink += data.cost + (meta ? 0 : 1)
        n++
      }
      if (sink < 0) console.log(sink)
      return n
    }),
    await timed(`raw keyset pages of ${BATCH} (.all), no JSON.parse (diag.)`, () => {
      let n = 0
      let after = START
      for (;;) {
        const rows = page.all(after, BATCH) as Row[]
        if (rows.length === 0) return n
        n += rows.length
        after = rows[rows.length - 1]![0]
      }
    }),
  ])()
  return results.finally(() => db.close())
}

async function adapterReadAll(store: EventStore, batch: number): Promise<number> {
  let n = 0
  let after = START
  for (;;) {
    const events = await store.readAll({ after, maxCount: batch })
    if (events.length === 0) return n
    n += events.length
    after = events[events.length - 1]!.globalPosition
  }
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
  console.log(`machine: ${machine()}; temp dir ${dir}\n`)

  await openSqliteEventStore({ path }).close() // the adapter creates its schema
  const loadSeconds = bulkLoad()
  console.log(`bulk load: ${loadSeconds.toFixed(1)} s (${fmtInt(EVENTS / loadSeconds)} events/s), file ${(statSync(path).size / 1e6).toFixed(0)} MB\n`)

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
  // Baselines again at the end: the first pass warms the page cache for everyone.
  const again = await rawScans()
  results.push(...again.slice(0, 2).map((r) => ({ ...r, name: `${r.name.replace(' (baseline)', '')} (again)` })))

  const parsedBaseline = Math.max(results[1]!.count / results[1]!.seconds, again[1]!.count / again[1]!.seconds)
  table(
    ['reader', 'seconds', 'events/s', 'vs raw+parse', 'goal 300k/s'],
    results.map((r) => {
      const rate = r.count / r.seconds
      return [r.name, r.seconds.toFixed(2), fmtInt(rate), fmtRatio(rate / parsedBaseline), rate >= GOAL ? 'yes' : 'NO']
    }),
  )
  console.log(`\n"vs raw+parse" compares with the faster of the two raw scans that parse JSON (${fmtInt(parsedBaseline)} events/s).`)
}

try {
  await main()
} finally {
  cleanup()
}
