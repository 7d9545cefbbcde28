// Issue 14, item 5: the tamper suite. Each case writes an honest ledger through the command
// side, then forges the SQLite event log directly the way a careful insider would (every
// balanceAfter recomputed so the arithmetic is consistent; where the case adds or changes an
// event, its hash chain relinked too unless the case is about the chain), rebuilds the ledger
// read model from the forged log (so read model and events agree), and runs the real auditor
// (`scripts/audit-ledger.ts`). The auditor must exit 1 and name the rule, the stream and the
// revision. Each case prints the auditor's line.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import Database from 'libsql'
import { tempDir } from './support/tmp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { rebuildProjection } from '../projections/runner.ts'
import { ledgerProjection } from '../projections/ledger.ts'
import { balanceDelta, creditsStream, type CreditEvent } from '../domain/credits/ledger.ts'
import { chainEvents } from '../domain/credits/chain.ts'
import { cycleOf } from '../domain/credits/plans.ts'
import { PRICES } from '../domain/credits/prices.ts'

const ACCOUNT = 'acc-tamper'
const STREAM = creditsStream.of(ACCOUNT)

interface Row {
  position?: number
  id: string
  revision: number
  type: string
  data: Record<string, unknown>
  metadata?: Record<string, unknown>
  recordedAt?: string
}

/** An honest ledger: grants, charges, a refund, a multi-part hold; returns the data dir and charge ids. */
async function honestLedger() {
  const tmp = tempDir('tamper-')
  const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  const credits = new CreditCommands(new CommandHandler(events))
  await credits.open(ACCOUNT, 'pro') // r0 opened, r1 grant
  const ask = await credits.charge(ACCOUNT, { operation: PRICES.askNote.operation, cost: PRICES.askNote.credits, chargeId: 'charge-ask' }) // r2
  await credits.charge(ACCOUNT, { operation: PRICES.transcriptRead.operation, cost: PRICES.transcriptRead.credits, chargeId: 'charge-read' }) // r3
  const outline = await credits.charge(ACCOUNT, { operation: PRICES.outline.operation, cost: PRICES.outline.credits, chargeId: 'charge-outline' }) // r4
  await credits.refund(ACCOUNT, outline.chargeId, 'outline failed', 'refund-outline') // r5
  const { reservationId } = await credits.reserve(ACCOUNT, { operation: 'analysis', amount: 200, noteId: 'n1', reservationId: 'hold-analysis' }) // r6
  await credits.capture(ACCOUNT, reservationId, 100, 'summary') // r7
  await credits.release(ACCOUNT, reservationId, 'one template failed') // r8
  await credits.charge(ACCOUNT, { operation: PRICES.clip.operation, cost: PRICES.clip.credits, chargeId: 'charge-clip' }) // r9
  await events.close()
  return { tmp, askChargeId: ask.chargeId }
}

/** Rewrites the stream in the SQLite file: `f` returns the rows to keep (changed or not) and new ones. */
function forge(dir: string, f: (rows: Row[]) => Row[], { relink }: { relink: boolean }) {
  const db = new Database(join(dir, 'events.db'))
  try {
    const rows = (db.prepare('SELECT position, body FROM events WHERE stream = ? ORDER BY revision').raw(true).all(STREAM) as [number, string][]).map(
      ([position, body]) => ({ ...(JSON.parse(body) as Row), position }),
    )
    const forged = f(structuredClone(rows))
    // Consistent arithmetic: every balanceAfter follows from the amounts, as the forger makes sure.
    let balance = 0
    for (const r of forged) {
      balance += balanceDelta({ type: r.type, data: r.data } as CreditEvent, balance)
      if ('balanceAfter' in r.data) r.data.balanceAfter = balance
    }
    if (relink) {
      const linked = chainEvents(
        forged.map((r) => {
          const { hash: _, prevHash: __, ...data } = r.data
          return { type: r.type, data }
        }),
        null,
      )
      forged.forEach((r, i) => (r.data = linked[i]!.data))
    }
    const kept = new Set(forged.flatMap((r) => (r.position ? [r.position] : [])))
    db.exec('BEGIN IMMEDIATE')
    for (const r of rows) if (!kept.has(r.position!)) db.prepare('DELETE FROM events WHERE position = ?').run(r.position)
    for (const r of forged) {
      const body = JSON.stringify({ id: r.id, streamName: STREAM, revision: r.revision, type: r.type, data: r.data, metadata: r.metadata ?? {}, recordedAt: r.recordedAt ?? new Date().toISOString() })
      if (r.position) db.prepare('UPDATE events SET revision = ?, type = ?, body = ? WHERE position = ?').run(r.revision, r.type, body, r.position)
      else db.prepare('INSERT INTO events (id, stream, category, revision, type, body) VALUES (?, ?, ?, ?, ?, ?)').run(r.id, STREAM, 'credits', r.revision, r.type, body)
    }
    db.exec('COMMIT')
  } finally {
    db.close()
  }
}

/** A new event at the end of the stream (its balanceAfter is filled in by `forge`). */
const appended = (rows: Row[], type: CreditEvent['type'], data: Record<string, unknown>): Row[] => [
  ...rows,
  { id: randomUUID(), revision: rows.at(-1)!.revision + 1, type, data: { ...data, balanceAfter: 0, at: new Date().toISOString() } },
]

async function rebuildReadModel(dir: string) {
  const events = openSqliteEventStore({ path: join(dir, 'events.db') })
  const docs = openEmbeddedDocumentStore({ path: join(dir, 'readmodels.db') })
  await rebuildProjection(ledgerProjection, { events, docs })
  await docs.close()
  await events.close()
}

function auditor(dir: string, extra: string[] = []) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/audit-ledger.ts', ACCOUNT, ...extra], {
    env: { ...process.env, DATA_DIR: dir, ESDB_URL: '', MONGO_URL: '' },
    encoding: 'utf8',
    timeout: 120_000,
  })
  return { status: r.status, out: r.stdout, err: r.stderr }
}

interface Case {
  name: string
  forge: (rows: Row[], ids: { askChargeId: string }) => Row[]
  relink: boolean
  rule: string
  revision: number
  anchor?: boolean
}

const cases: Case[] = [
  {
    name: 'a charge duplicated with the same chargeId',
    forge: (rows) => appended(rows, 'CreditsCharged', { chargeId: 'charge-ask', operation: 'ask', cost: 10, noteId: null, requestId: null }),
    relink: true,
    rule: 'unique-id',
    revision: 10,
  },
  {
    name: 'a second refund of one charge',
    forge: (rows) => appended(rows, 'CreditsRefunded', { refundId: randomUUID(), chargeId: 'charge-outline', operation: 'outline', amount: 50, noteId: null, reason: 'again' }),
    relink: true,
    rule: 'refund-twice',
    revision: 10,
  },
  {
    name: 'a refund of 500 on a 10-credit charge',
    forge: (rows, ids) => appended(rows, 'CreditsRefunded', { refundId: randomUUID(), chargeId: ids.askChargeId, operation: 'ask', amount: 500, noteId: null, reason: 'generous' }),
    relink: true,
    rule: 'refund-exceeds-charge',
    revision: 10,
  },
  {
    name: 'a refund of a charge that never happened',
    forge: (rows) => appended(rows, 'CreditsRefunded', { refundId: randomUUID(), chargeId: 'charge-never', operation: 'ask', amount: 10, noteId: null, reason: 'made up' }),
    relink: true,
    rule: 'refund-unknown-charge',
    revision: 10,
  },
  {
    name: 'a second monthly grant in one cycle',
    forge: (rows) => {
      const before = rows.at(-1)!.data.balanceAfter as number
      return appended(rows, 'CreditCycleStarted', { cycle: cycleOf(new Date()), plan: 'pro', granted: 5000, expired: before })
    },
    relink: true,
    rule: 'grant-once-per-cycle',
    revision: 10,
  },
  {
    name: 'a consistent rewrite of later balanceAfter values (the ask charge made 20, every later balance lowered by 10)',
    forge: (rows) => rows.map((r) => (r.revision === 2 ? { ...r, data: { ...r.data, cost: 20 } } : r)),
    relink: false,
    rule: 'hash-chain',
    revision: 2,
  },
  {
    name: 'the same rewrite with the whole hash chain recomputed, against the head anchored before it',
    forge: (rows) => rows.map((r) => (r.revision === 2 ? { ...r, data: { ...r.data, cost: 20 } } : r)),
    relink: true,
    rule: 'hash-chain',
    revision: 9,
    anchor: true,
  },
  {
    name: 'a deleted event in the middle (the refund r5; later balances made consistent)',
    forge: (rows) => rows.filter((r) => r.revision !== 5),
    relink: false,
    rule: 'revision-gap',
    revision: 6,
  },
]

const honest = await honestLedger()
t.teardown(honest.tmp.remove)
await rebuildReadModel(honest.tmp.dir)
const clean = auditor(honest.tmp.dir)
const head = /^HEAD \S+ r(\d+) ([0-9a-f]{64})/m.exec(clean.out)
t.test('the honest ledger passes the auditor and prints its head hash', async (t) => {
  t.equal(clean.status, 0, clean.out + clean.err)
  t.match(clean.out, /VERDICT: OK/)
  t.ok(head, 'a HEAD line')
  t.comment(clean.out.split('\n').find((l) => l.startsWith('HEAD')) ?? '')
})

for (const c of cases) {
  t.test(c.name, async (t) => {
    const tmp = tempDir('tamper-')
    t.teardown(tmp.remove)
    // Each case starts from a copy of the honest ledger.
    const src = new Database(join(honest.tmp.dir, 'events.db'))
    src.exec(`VACUUM INTO '${join(tmp.dir, 'events.db')}'`)
    src.close()
    forge(tmp.dir, (rows) => c.forge(rows, honest), { relink: c.relink })
    await rebuildReadModel(tmp.dir)
    const r = auditor(tmp.dir, c.anchor && head ? ['--anchor', `${head[1]}:${head[2]}`] : [])
    t.equal(r.status, 1, 'the auditor exits 1')
    const line = r.out.split('\n').find((l) => l.startsWith(`VIOLATION ${c.rule} stream=${STREAM} revision=${c.revision}:`))
    t.ok(line, `it names ${c.rule} at ${STREAM} r${c.revision}\n${r.out}${r.err}`)
    t.notMatch(r.out, /^MISMATCH/m, 'the read model was rebuilt from the forged log: only the invariants catch it')
    t.comment(`${c.name}:`)
    for (const l of r.out.split('\n').filter((l) => l.startsWith('VIOLATION'))) t.comment(`  ${l}`)
  })
}
