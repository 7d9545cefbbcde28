// Issue 14, item 3: refunds cannot be lost. A process paying for an operation that fails is
// killed (SIGKILL, a real process) at each step of the charge/failure/refund path; afterwards the
// refund process manager (CreditCommands.settleCharges, what the credit-holds worker runs on every
// pass), run twice and concurrently, ends every case with exactly one refund of the charge, and
// the ledger's invariants hold. A charge whose operation succeeded is never refunded.
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { tempDir } from './support/tmp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { toDomainEvent } from '../ports/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { capturedChargeId, creditsStream, type CreditEvent } from '../domain/credits/ledger.ts'
import { checkLedgerInvariants } from '../domain/credits/invariants.ts'
import { testService } from './support/service.ts'
import { CREDIT_ACCOUNTS, type CreditAccountDoc } from '../projections/ledger.ts'
import { embeddedEnv } from './support/embeddedEnv.ts'

const LEASE_MS = 60_000

async function runProcess(dir: string, account: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/chargedOperationProcess.ts'], {
    env: { ...process.env, DATA_DIR: dir, ACCOUNT: account, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null]
  return { code, signal, out }
}

const cases: { fault: string | null; outcome: 'fail' | 'ok'; dies: boolean; refunds: number; via: string }[] = [
  { fault: 'crash-after-charge', outcome: 'fail', dies: true, refunds: 1, via: 'the lease runs out without completion' },
  { fault: 'crash-after-charge-failed', outcome: 'fail', dies: true, refunds: 1, via: 'the failure event' },
  { fault: 'crash-after-refund', outcome: 'fail', dies: true, refunds: 1, via: 'the refund made before the crash' },
  { fault: null, outcome: 'fail', dies: false, refunds: 1, via: 'the failure event, settled at once' },
  { fault: null, outcome: 'ok', dies: false, refunds: 0, via: 'completion: nothing to refund' },
  { fault: 'crash-after-charge', outcome: 'ok', dies: true, refunds: 1, via: 'the lease: the completion was never recorded' },
]

for (const c of cases) {
  t.test(`killed at ${c.fault ?? 'no point'} (operation ${c.outcome === 'ok' ? 'succeeds' : 'fails'}): exactly ${c.refunds} refund(s), by ${c.via}`, async (t) => {
    const tmp = tempDir('refund-crash-')
    t.teardown(tmp.remove)
    const account = 'acc-r'
    const r = await runProcess(tmp.dir, account, { CHARGE_OP_OUTCOME: c.outcome, ...(c.fault ? { FAULT_INJECT: c.fault } : {}) })
    if (c.dies) t.equal(r.signal, 'SIGKILL', `the process died by SIGKILL at ${c.fault}`)
    else t.equal(r.code, 0, r.out)

    const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
    t.teardown(() => events.close())
    // The manager, run by a restarted service: first within the lease, then past it.
    let now = new Date()
    const manager = () => new CreditCommands(new CommandHandler(events), () => now, { leaseMs: LEASE_MS })
    const read = async () => (await events.readStream(creditsStream.of(account))).events.map((e) => ({ revision: e.revision, event: toDomainEvent<CreditEvent>(e) }))
    await Promise.all([manager().settleCharges(account), manager().settleCharges(account)])
    const withinLease = (await read()).filter((e) => e.event.type === 'CreditsRefunded').length
    if (c.via.startsWith('the lease')) t.equal(withinLease, 0, 'nothing is refunded while the operation may still be running')
    now = new Date(Date.now() + LEASE_MS + 1000)
    await Promise.all([manager().settleCharges(account), manager().settleCharges(account)])
    await manager().settleCharges(account)

    const ledger = await read()
    const charge = ledger.find((e) => e.event.type === 'CreditsCharged')!.event as Extract<CreditEvent, { type: 'CreditsCharged' }>
    const refunds = ledger.filter((e) => e.event.type === 'CreditsRefunded' && e.event.data.chargeId === charge.data.chargeId)
    t.equal(refunds.length, c.refunds, `${refunds.length} refund(s): ${ledger.map((e) => e.event.type).join(', ')}`)
    t.same(checkLedgerInvariants(creditsStream.of(account), ledger).violations, [], 'the ledger breaks no invariant')
    const balance = ledger.flatMap((e) => ('balanceAfter' in e.event.data ? [e.event.data.balanceAfter] : [])).at(-1)
    t.equal(balance, c.refunds ? 5000 : 4995, 'the balance is back (or kept the price of a completed operation)')
    t.comment(`${c.fault ?? 'no crash'} / ${c.outcome}: ${ledger.map((e) => e.event.type).join(' → ')}`)
  })
}

// Every charged operation, through its real command in a real process (test/support/
// chargedCommandProcess.ts), killed at each step: after the charge (the pending charge, or an
// analysis's pending captures), after the failure is recorded, after the refund. The restarted
// manager (two of them, concurrently) ends each with exactly one refund per charge; an operation
// that completed is never refunded; then the auditor (`npm run audit-ledger -- --all`) finds no
// violation in any of the accounts.
/** Every operation that charges credits (domain/credits/prices.ts, translation being free); the import's hold is test/credits.holds.crash.test.ts's. */
const CHARGED_OPERATIONS = ['ask-note', 'ask-library', 'outline', 'deliverable', 'analysis', 'clip', 'transcript'] as const
type ChargedOperation = (typeof CHARGED_OPERATIONS)[number]
const FAILING_OPS = CHARGED_OPERATIONS.filter((op) => op !== 'transcript')
const commandCases: { op: ChargedOperation; fault: string | null; outcome: 'fail' | 'ok'; byLease: boolean }[] = [
  ...FAILING_OPS.flatMap((op) => [
    { op, fault: 'crash-after-charge', outcome: 'fail' as const, byLease: true },
    { op, fault: 'crash-after-charge-failed', outcome: 'fail' as const, byLease: false },
    { op, fault: 'crash-after-refund', outcome: 'fail' as const, byLease: false },
  ]),
  // A transcript read cannot be made to fail from outside; killed after its charge it is refunded by the lease.
  { op: 'transcript', fault: 'crash-after-charge', outcome: 'ok', byLease: true },
  ...CHARGED_OPERATIONS.map((op) => ({ op, fault: null, outcome: 'ok' as const, byLease: false })),
]

t.test('every charged operation, killed at each step, ends with exactly one refund per charge, and the auditor agrees', async (t) => {
  const tmp = tempDir('refund-commands-crash-')
  t.teardown(tmp.remove)
  const figures: string[] = []
  for (const c of commandCases) {
    const label = `${c.op} killed at ${c.fault ?? 'no point'} (operation ${c.outcome === 'ok' ? 'succeeds' : 'fails'})`
    await t.test(label, async (t) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/chargedCommandProcess.ts'], {
        env: { ...process.env, DATA_DIR: tmp.dir, OPERATION: c.op, CHARGE_OP_OUTCOME: c.outcome, CREDIT_HOLD_LEASE_SECONDS: String(LEASE_MS / 1000), ...(c.fault ? { FAULT_INJECT: c.fault } : {}) },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let out = ''
      child.stdout!.on('data', (d) => (out += d))
      child.stderr!.on('data', (d) => (out += d))
      const [code, signal] = (await once(child, 'exit')) as [number | null, string | null]
      if (c.fault) t.equal(signal, 'SIGKILL', `the process died by SIGKILL at ${c.fault}`)
      else t.equal(code, 0, out)
      const started = out.split('\n').find((l) => l.startsWith('{"accountId"'))
      if (!started) throw new Error(`the process gave no account: ${out.slice(-2000)}`)
      const { accountId } = JSON.parse(started) as { accountId: string }
      if (!c.fault) t.match(out, c.outcome === 'ok' ? /"outcome":"ok"/ : /"outcome":"failed/, 'the operation ended as scripted')

      // The restarted service: its refund process manager, and a second one racing it.
      let offset = 0
      const clock = () => new Date(Date.now() + offset)
      const s = await testService({ dataDir: tmp.dir, clock, env: { CREDIT_HOLD_LEASE_SECONDS: String(LEASE_MS / 1000) } })
      t.teardown(() => s.close())
      const managers = [s.services.credits, new CreditCommands(s.services.handler, clock, { leaseMs: LEASE_MS })]
      const read = async () => (await s.services.events.readStream(creditsStream.of(accountId))).events.map((e) => ({ revision: e.revision, event: toDomainEvent<CreditEvent>(e) }))
      const refunds = (ledger: Awaited<ReturnType<typeof read>>) => ledger.filter((e) => e.event.type === 'CreditsRefunded')
      // What the credit-holds worker looks up to find the accounts to settle: the read model's open charges.
      const openCharges = async () => {
        await s.services.sync.waitFor('credit-ledger', (await s.services.events.readStream(creditsStream.of(accountId))).events.at(-1)!.globalPosition)
        return (await s.docs.collection<CreditAccountDoc>(CREDIT_ACCOUNTS).findOne({ _id: accountId }))?.openCharges ?? 0
      }
      t.equal(await openCharges(), c.fault && c.fault !== 'crash-after-refund' ? 1 : 0, 'the read model shows the charge open until it is completed or refunded')
      await Promise.all(managers.map((m) => m.settleCharges(accountId)))
      const withinLease = refunds(await read()).length
      if (c.byLease) t.equal(withinLease, 0, 'nothing is refunded while the operation may still be running')
      offset = LEASE_MS + 1000
      await Promise.all(managers.map((m) => m.settleCharges(accountId)))
      await managers[0]!.settleCharges(accountId)

      t.equal(await openCharges(), 0, 'and closed once refunded')
      const ledger = await read()
      const charges = ledger.flatMap((e) => (e.event.type === 'CreditsCharged' ? [e.event.data.chargeId] : e.event.type === 'CreditsCaptured' ? [capturedChargeId(e.event.data.reservationId, e.event.data.part)] : []))
      t.equal(charges.length, 1, `one charge: ${ledger.map((e) => e.event.type).join(', ')}`)
      const expected = c.fault || c.outcome === 'fail' ? 1 : 0
      for (const id of charges) t.equal(refunds(ledger).filter((e) => e.event.type === 'CreditsRefunded' && e.event.data.chargeId === id).length, expected, `charge ${id}: exactly ${expected} refund(s)`)
      t.equal(refunds(ledger).length, expected * charges.length, 'no other refund')
      t.same(checkLedgerInvariants(creditsStream.of(accountId), ledger, { holds: { now: clock().toISOString(), leaseMs: LEASE_MS, noteExists: () => true } }).violations, [], 'the ledger breaks no invariant')
      const balance = ledger.flatMap((e) => ('balanceAfter' in e.event.data ? [e.event.data.balanceAfter] : [])).at(-1)
      figures.push(`${label}: ${refunds(ledger).length} refund(s), ${withinLease} within the lease, balance ${balance}; ${ledger.map((e) => e.event.type).join(' → ')}`)
      await s.services.sync.waitFor('credit-ledger', ledger.length ? (await s.services.events.readStream(creditsStream.of(accountId))).events.at(-1)!.globalPosition : null)
    })
  }
  for (const f of figures) t.comment(f)

  const audit = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/audit-ledger.ts', '--all', '--json'], {
    env: { ...embeddedEnv(), DATA_DIR: tmp.dir, CREDIT_HOLD_LEASE_SECONDS: String(LEASE_MS / 1000) },
    encoding: 'utf8',
    timeout: 120_000,
  })
  const reports = audit.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { accountId: string; ok: boolean; problems: string[]; violations?: unknown[] })
  t.equal(reports.length, commandCases.length, 'the auditor read every account')
  t.same(reports.filter((r) => !r.ok), [], 'the auditor finds no violation and no mismatch')
  t.equal(audit.status, 0, `npm run audit-ledger -- --all exits 0 ${audit.stderr.slice(-1000)}`)
  t.comment(`audit-ledger --all: ${reports.length} accounts, ${reports.filter((r) => r.ok).length} OK`)
})
