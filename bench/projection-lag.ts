// Projection lag under a steady command load: how long after a command's append resolved has a
// projection applied its event?
//
//   npx tsx bench/projection-lag.ts                 (RATE=1000 commands/s for SECONDS=10)
//   RATE=2000 SECONDS=5 ACCOUNTS=500 npx tsx bench/projection-lag.ts
//   DOCS_IN_MEMORY=1 npx tsx bench/projection-lag.ts   (diagnostic: document store in ':memory:')
//
// One process, like the service: CommandHandler + SQLite event store (synchronous=FULL) drive
// ChargeCredits (cost 1) round-robin over ACCOUNTS accounts opened on plan 'power', open loop
// (commands are issued on schedule whether or not earlier ones are done); the projection runner
// follows the log into the embedded document store. Each run uses fresh files:
//   - baseline: a projection whose handler does nothing
//   - one-doc: one document per event, upsert guarded by position
//   - ledger: projections/ledger.ts (ledger entry per event + account summary)
// Lag of an event = time its projection batch committed (read model and checkpoint, one write
// batch) - time its append resolved.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { creditsStream, ledgerDecider, type CreditCommand } from '../domain/credits/ledger.ts'
import { ledgerProjection } from '../projections/ledger.ts'
import { startProjection, type Projection } from '../projections/runner.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { EventStore, RecordedEvent } from '../ports/eventStore.ts'
import { envInt, fmtInt, fmtMs, machine, machineLoad, now, pressure, stats, table, tempDir, type Stats } from './lib.ts'

const RATE = envInt('RATE', 1000)
const SECONDS = envInt('SECONDS', 10)
const ACCOUNTS = envInt('ACCOUNTS', 1000)
const GOAL_P99_MS = 100
const { dir, cleanup } = tempDir('projection-lag')
let runNo = 0

const noop: Projection = { name: 'bench-noop', collections: [], async handle() {} }

const oneDocPerEvent: Projection = {
  name: 'bench-one-doc',
  collections: ['bench_events'],
  async handle(events, docs) {
    const c = docs.collection('bench_events')
    for (const e of events) {
      await c.updateOne(
        { _id: e.id, $or: [{ position: { $lt: e.globalPosition } }, { position: { $exists: false } }] },
        { $set: { position: e.globalPosition, stream: e.streamName, revision: e.revision, type: e.type, data: e.data } },
        { upsert: true },
      )
    }
  },
}

/** Wraps the store so the moment each append resolves is known per global position. */
function recordAppends(store: EventStore, appendedAt: Map<number, number>): EventStore {
  return {
    async appendToStream(stream, events, options) {
      const r = await store.appendToStream(stream, events, options)
      const t = now()
      for (let k = 0; k < events.length; k++) appendedAt.set(r.lastGlobalPosition - k, t)
      return r
    },
    readStream: (s, o) => store.readStream(s, o),
    readAll: (o) => store.readAll(o),
    subscribeToAll: (o) => store.subscribeToAll(o),
    close: () => store.close(),
  }
}

interface RunResult {
  name: string
  lag: Stats
  command: Stats
  issued: number
  achievedRate: number
  failures: number
  /** Machine busy-ness over the run's last 10 s: cpu / io wait %. */
  busy: string
}

async function run(label: string, inner: Projection): Promise<RunResult> {
  const base = join(dir, `${++runNo}-${label}`)
  const appendedAt = new Map<number, number>()
  const events = recordAppends(openSqliteEventStore({ path: `${base}-events.db` }), appendedAt)
  // DOCS_IN_MEMORY=1 (diagnostic): the document store in ':memory:', to tell disk contention apart.
  const docsPath = process.env.DOCS_IN_MEMORY === '1' ? ':memory:' : `${base}-docs.db`
  const store = openEmbeddedDocumentStore({ path: docsPath })
  // The runner applies each batch inside one writeBatch; an event counts as projected only once
  // that batch has committed, not when the handler returned.
  const lags: number[] = []
  let measuring = false
  let handled: RecordedEvent[] = []
  const docs: DocumentStore = {
    atomicWriteBatches: store.atomicWriteBatches,
    collection: (name) => store.collection(name),
    close: () => store.close(),
    async writeBatch(fn) {
      const result = await store.writeBatch(fn)
      if (measuring) {
        const t = now()
        for (const e of handled) {
          const a = appendedAt.get(e.globalPosition)
          if (a !== undefined) lags.push(t - a)
        }
      }
      handled = []
      return result
    },
  }
  const handler = new CommandHandler(events, { cacheSize: ACCOUNTS + 100 })
  const at = () => new Date().toISOString()
  const account = (i: number) => `bench-${i}`

  // Open the accounts before measuring, and let the projection catch up on them.
  let last = -1
  for (let i = 0; i < ACCOUNTS; i++) {
    const r = await handler.handle(creditsStream.of(account(i)), { type: 'OpenCreditAccount', accountId: account(i), plan: 'power', now: at() } satisfies CreditCommand, ledgerDecider)
    last = r.position ?? last
  }
  appendedAt.clear()

  const projection: Projection = {
    ...inner,
    async handle(batch, d) {
      await inner.handle(batch, d)
      handled = batch
    },
  }
  const running = startProjection(projection, { events, docs })
  await running.waitFor(last, 60_000)
  measuring = true

  // Open loop: command i is issued at t0 + i / RATE seconds.
  const total = RATE * SECONDS
  const commandLatency: number[] = []
  const inFlight: Promise<unknown>[] = []
  let issued = 0
  let failures = 0
  let lastPosition = last
  const t0 = now()
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((now() - t0) * RATE) / 1000) + 1)
      while (issued < due) {
        const i = issued++
        const s = now()
        inFlight.push(
          handler
            .handle(
              creditsStream.of(account(i % ACCOUNTS)),
              { type: 'ChargeCredits', chargeId: randomUUID(), operation: 'bench', cost: 1, noteId: null, requestId: null, now: at() } satisfies CreditCommand,
              ledgerDecider,
            )
            .then(
              (r) => {
                commandLatency.push(now() - s)
                if (r.position !== null && r.position > lastPosition) lastPosition = r.position
              },
              () => void failures++,
            ),
        )
      }
      if (issued < total) setTimeout(tick, 1)
      else resolve()
    }
    tick()
  })
  await Promise.all(inFlight)
  const driveSeconds = (now() - t0) / 1000
  await running.waitFor(lastPosition, 60_000)
  await running.stop()
  await events.close()
  await docs.close()
  return {
    name: label,
    lag: stats(lags, driveSeconds),
    command: stats(commandLatency, driveSeconds),
    issued,
    achievedRate: commandLatency.length / driveSeconds,
    failures,
    busy: `${pressure('cpu')} / ${pressure('io')}`,
  }
}

async function main() {
  console.log(`bench/projection-lag.ts: ${fmtInt(RATE)} ChargeCredits/s for ${SECONDS} s over ${fmtInt(ACCOUNTS)} 'power' accounts`)
  console.log(`machine: ${machine()}; temp dir ${dir}`)
  console.log(`at start: ${machineLoad()}\n`)
  const results = [await run('noop-baseline', noop), await run('one-doc-per-event', oneDocPerEvent), await run('ledger-projection', ledgerProjection)]
  table(
    ['projection', 'cmds/s', 'cmd p50', 'cmd p99', 'events', 'lag p50 ms', 'lag p95', 'lag p99', 'lag max', `p99<${GOAL_P99_MS}ms`, 'cpu/io wait %'],
    results.map((r) => [
      r.name + (r.failures ? ` (${r.failures} failed)` : ''),
      fmtInt(r.achievedRate),
      fmtMs(r.command.p50),
      fmtMs(r.command.p99),
      fmtInt(r.lag.count),
      fmtMs(r.lag.p50),
      fmtMs(r.lag.p95),
      fmtMs(r.lag.p99),
      fmtMs(r.lag.max),
      r.lag.p99 < GOAL_P99_MS ? 'yes' : 'NO',
      r.busy,
    ]),
  )
  console.log('\ncmd p50/p99: command latency in ms (issue to result). Lag: append resolved -> projection batch committed.')
  console.log('cpu/io wait %: share of the last 10 s of the run in which some task on the machine waited for cpu / io (PSI; io includes our own fsyncs).')
}

try {
  await main()
  console.log(`at end: ${machineLoad()}`)
} finally {
  cleanup()
}
