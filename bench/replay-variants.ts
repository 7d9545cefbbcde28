// Experiments behind the suggestions in bench/README.md: local variants of the SQLite adapter's
// readAll, measured on the same log. Not part of the adapter.
//
//   npx tsx bench/replay-variants.ts          (EVENTS=300000 by default)
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { openSqlite, type SqliteDatabase } from '../adapters/sqlite/database.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { START, type RecordedEvent } from '../ports/eventStore.ts'
import { envInt, fmtInt, machine, now, table, tempDir } from './lib.ts'

const EVENTS = envInt('EVENTS', 300_000)
const ACCOUNTS = 10_000
const BATCH = 5000
const { dir, cleanup } = tempDir('replay-variants')
const path = join(dir, 'events.db')

function load() {
  const db = openSqlite(path, { synchronous: 'FULL' })
  db.exec('PRAGMA synchronous = OFF')
  db.exec('PRAGMA cache_size = -1000000')
  const insert = db.prepare('INSERT INTO events (id, stream, category, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
  const base = Date.parse('2025-01-01T00:00:00Z')
  db.exec('BEGIN')
  for (let i = 0; i < EVENTS; i++) {
    const revision = Math.floor(i / ACCOUNTS)
    const at = new Date(base + i).toISOString()
    const requestId = randomUUID()
    const data = { chargeId: randomUUID(), operation: 'transcribe', cost: 1, noteId: null, requestId, balanceAfter: 25_000 - revision, at }
    insert.run(randomUUID(), `credits-acc-${(i % ACCOUNTS).toString().padStart(6, '0')}`, 'credits', revision, 'CreditsCharged', JSON.stringify(data), i % 2 === 0 ? JSON.stringify({ requestId }) : null, at)
  }
  db.exec('COMMIT')
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  db.close()
}

type Row = [number, string, string, number, string, string, string | null, string]
const COLUMNS = 'position, id, stream, revision, type, data, metadata, recorded_at'
const toEvent = (r: Row): RecordedEvent => ({
  globalPosition: r[0], id: r[1], streamName: r[2], revision: r[3], type: r[4],
  data: JSON.parse(r[5]), metadata: r[6] === null ? {} : JSON.parse(r[6]), recordedAt: r[7],
})

/** Pages through the log with `fetch(after)` and counts events. */
function drain(fetch: (after: number) => RecordedEvent[] | { globalPosition: number }[]): number {
  let n = 0
  let after = START
  for (;;) {
    const batch = fetch(after)
    if (batch.length === 0) return n
    n += batch.length
    after = batch[batch.length - 1]!.globalPosition
  }
}

function variants(db: SqliteDatabase) {
  const rows = db.prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`).raw(true)
  const positions = db.prepare('SELECT position FROM events WHERE position > ? ORDER BY position LIMIT ?').raw(true)
  // The whole page as one JSON text built by SQLite: one string crosses into JS per batch, and
  // V8's JSON.parse builds every object (data/metadata are stored as JSON already, so they are
  // spliced in as they are).
  const asJson = db.prepare(`SELECT '[' || group_concat('{"globalPosition":' || position || ',"id":' || json_quote(id) || ',"streamName":' || json_quote(stream)
      || ',"revision":' || revision || ',"type":' || json_quote(type) || ',"data":' || data || ',"metadata":' || coalesce(metadata, '{}')
      || ',"recordedAt":' || json_quote(recorded_at) || '}', ',') || ']'
    FROM (SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?)`).raw(true)
  return {
    'adapter toEvent (copy of current readAll)': () => drain((a) => (rows.all(a, BATCH) as Row[]).map(toEvent)),
    'rows only, no toEvent (driver cost)': () => drain((a) => (rows.all(a, BATCH) as Row[]).map((r) => ({ globalPosition: r[0] }))),
    'position column only (per-row floor)': () => drain((a) => (positions.all(a, BATCH) as [number][]).map((r) => ({ globalPosition: r[0] }))),
    'page as one JSON text (group_concat)': () =>
      drain((a) => {
        const [text] = asJson.get(a, BATCH) as [string | null]
        return text === null ? [] : (JSON.parse(text) as RecordedEvent[])
      }),
  }
}

async function main() {
  console.log(`bench/replay-variants.ts: ${fmtInt(EVENTS)} events; machine: ${machine()}\n`)
  await openSqliteEventStore({ path }).close()
  load()
  const out: (string | number)[][] = []
  for (const mmap of [0, 1 << 30]) {
    const db = openSqlite(path, { synchronous: 'FULL' })
    db.exec(`PRAGMA mmap_size = ${mmap}`)
    for (const [name, run] of Object.entries(variants(db))) {
      run() // warm
      const t0 = now()
      const n = run()
      const s = (now() - t0) / 1000
      if (n !== EVENTS) throw new Error(`${name}: ${n}`)
      out.push([`${name}${mmap ? ', mmap_size 1 GiB' : ''}`, s.toFixed(2), fmtInt(n / s)])
    }
    db.close()
  }
  table(['readAll variant (batches of 5000)', 'seconds', 'events/s'], out)
}

try {
  await main()
} finally {
  cleanup()
}
