// Append throughput of the SQLite event store against a raw libsql insert loop.
//
//   npx tsx bench/append.ts            (APPENDS=5000 per scenario by default)
//   APPENDS=20000 npx tsx bench/append.ts
//
// Every scenario writes into its own fresh file in a temp directory, with the pragmas the adapter
// uses (WAL, synchronous=FULL, busy_timeout), one autocommitted write per event, sequentially.
// The raw baseline runs first and again last; the ratio uses the mean of the two runs so a drift
// of the disk during the run shows up instead of skewing one side.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { openSqlite } from '../adapters/sqlite/database.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { creditsStream, ledgerDecider, type CreditCommand } from '../domain/credits/ledger.ts'
import { envInt, fmtInt, fmtMs, fmtRatio, machine, machineLoad, now, stats, table, tempDir, type Stats } from './lib.ts'

const N = envInt('APPENDS', 5000)
const WARMUP = Math.min(200, Math.ceil(N / 10))
const { dir, cleanup } = tempDir('append')
let fileNo = 0
const freshPath = (name: string) => join(dir, `${++fileNo}-${name}.db`)

const payload = (i: number) => ({ accountId: `acc-${i}`, amount: 1, note: 'benchmark event', at: new Date().toISOString() })

/** Runs `op(i)` for warmup + N iterations, timing each of the last N. */
async function measure(op: (i: number) => unknown): Promise<Stats> {
  for (let i = 0; i < WARMUP; i++) await op(-1 - i)
  const lat = new Float64Array(N)
  const t0 = now()
  for (let i = 0; i < N; i++) {
    const s = now()
    await op(i)
    lat[i] = now() - s
  }
  return stats(lat, (now() - t0) / 1000)
}

/** Baseline: one autocommitted INSERT of (id, stream, type, JSON data) per event. */
async function rawInsertLoop(): Promise<Stats> {
  const db = openSqlite(freshPath('raw'), { synchronous: 'FULL' })
  db.exec('CREATE TABLE raw_events (position INTEGER PRIMARY KEY, id TEXT NOT NULL, stream TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL)')
  const insert = db.prepare('INSERT INTO raw_events (id, stream, type, data) VALUES (?, ?, ?, ?)')
  try {
    return await measure((i) => insert.run(randomUUID(), `bench-${i}`, 'BenchEvent', JSON.stringify(payload(i))))
  } finally {
    db.close()
  }
}

async function adapterDistinctStreams(): Promise<Stats> {
  const store = openSqliteEventStore({ path: freshPath('distinct') })
  try {
    return await measure((i) =>
      store.appendToStream(`bench-${i}`, [{ id: randomUUID(), type: 'BenchEvent', data: payload(i) }], { expectedRevision: 'no_stream' }),
    )
  } finally {
    await store.close()
  }
}

async function adapterHotStream(): Promise<Stats> {
  const store = openSqliteEventStore({ path: freshPath('hot') })
  let revision = -1
  try {
    return await measure(async (i) => {
      const r = await store.appendToStream('bench-hot', [{ id: randomUUID(), type: 'BenchEvent', data: payload(i) }], {
        expectedRevision: revision === -1 ? 'no_stream' : revision,
      })
      revision = r.nextExpectedRevision
    })
  } finally {
    await store.close()
  }
}

/**
 * ChargeCredits (cost 1) through CommandHandler + ledger decider: (c) each on its own opened
 * account, (d) all on one account (a 'power' plan holds 25,000 credits, enough for every charge).
 */
async function commandHandlerCharges(): Promise<{ open: Stats; charge: Stats; hotCharge: Stats }> {
  const store = openSqliteEventStore({ path: freshPath('commands') })
  const handler = new CommandHandler(store, { cacheSize: N + WARMUP + 100 })
  const at = () => new Date().toISOString()
  const account = (i: number) => `bench-${i}`
  try {
    // Opening appends two events per account (opened + cycle started) in one commit.
    const open = await measure((i) =>
      handler.handle(creditsStream.of(account(i)), { type: 'OpenCreditAccount', accountId: account(i), plan: 'power', now: at() } satisfies CreditCommand, ledgerDecider),
    )
    const charge = await measure((i) =>
      handler.handle(
        creditsStream.of(account(i)),
        { type: 'ChargeCredits', chargeId: randomUUID(), operation: 'bench', cost: 1, noteId: null, requestId: null, now: at() } satisfies CreditCommand,
        ledgerDecider,
      ),
    )
    const hotAccount = 'bench-hot'
    await handler.handle(creditsStream.of(hotAccount), { type: 'OpenCreditAccount', accountId: hotAccount, plan: 'power', now: at() } satisfies CreditCommand, ledgerDecider)
    const hotCharge = await measure(() =>
      handler.handle(
        creditsStream.of(hotAccount),
        { type: 'ChargeCredits', chargeId: randomUUID(), operation: 'bench', cost: 1, noteId: null, requestId: null, now: at() } satisfies CreditCommand,
        ledgerDecider,
      ),
    )
    return { open, charge, hotCharge }
  } finally {
    await store.close()
  }
}

async function main() {
  console.log(`bench/append.ts: ${fmtInt(N)} timed single-event appends per scenario (+${WARMUP} warm-up), sequential`)
  console.log(`machine: ${machine()}; temp dir ${dir}`)
  console.log(`at start: ${machineLoad()}\n`)

  const base1 = await rawInsertLoop()
  const distinct = await adapterDistinctStreams()
  const hot = await adapterHotStream()
  const { open, charge, hotCharge } = await commandHandlerCharges()
  const base2 = await rawInsertLoop()
  const baseRate = (base1.rate + base2.rate) / 2

  const row = (name: string, s: Stats, eventsPerOp = 1) => [
    name,
    fmtInt(s.rate * eventsPerOp),
    fmtInt(s.rate),
    fmtMs(s.p50),
    fmtMs(s.p99),
    fmtMs(s.max),
    fmtRatio((s.rate * eventsPerOp) / baseRate),
  ]
  table(
    ['scenario', 'events/s', 'ops/s', 'p50 ms', 'p99 ms', 'max ms', 'vs raw'],
    [
      row('raw INSERT loop (baseline, run 1)', base1),
      row('raw INSERT loop (baseline, run 2)', base2),
      row('(a) adapter, distinct streams no_stream', distinct),
      row('(b) adapter, one hot stream, rev n', hot),
      row('(c) CommandHandler ChargeCredits, distinct', charge),
      row('(d) CommandHandler ChargeCredits, one hot', hotCharge),
      row('    CommandHandler OpenCreditAccount (2 ev)', open, 2),
    ],
  )
  console.log(`\nbaseline = mean of the two raw runs = ${fmtInt(baseRate)} events/s. Goal: (a)-(d) >= 0.50x.`)
  for (const [name, s] of [['(a)', distinct], ['(b)', hot], ['(c)', charge], ['(d)', hotCharge]] as const) {
    const r = s.rate / baseRate
    console.log(`  ${name} ${fmtRatio(r)} ${r >= 0.5 ? 'meets' : 'MISSES'} the goal`)
  }
}

try {
  await main()
  console.log(`at end: ${machineLoad()}`)
} finally {
  cleanup()
}
