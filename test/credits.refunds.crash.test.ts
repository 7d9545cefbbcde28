// Issue 14, item 3: refunds cannot be lost. A process paying for an operation that fails is
// killed (SIGKILL, a real process) at each step of the charge/failure/refund path; afterwards the
// refund process manager (CreditCommands.settleCharges, what the credit-holds worker runs on every
// pass), run twice and concurrently, ends every case with exactly one refund of the charge, and
// the ledger's invariants hold. A charge whose operation succeeded is never refunded.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { tempDir } from './support/tmp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { toDomainEvent } from '../ports/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { creditsStream, type CreditEvent } from '../domain/credits/ledger.ts'
import { checkLedgerInvariants } from '../domain/credits/invariants.ts'

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
