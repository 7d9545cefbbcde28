// Which holds are orphans (domain/credits/holds.ts): the rule the sweeper releases by and the
// auditor reports by (issue 11, item 10). The crash itself: credits.holds.crash.test.ts.
import t from 'tap'
import { recorder } from './support/decider.ts'
import { orphanHolds, ownerNotesToCheck } from '../domain/credits/holds.ts'
import { auditLedger } from '../domain/credits/audit.ts'
import { ledgerDecider } from '../domain/credits/ledger.ts'

const AT = '2026-11-10T10:00:00.000Z'
const LATER = '2026-11-10T10:20:00.000Z'
const LEASE = 15 * 60_000
const hold = (operation: string, noteId: string | null) => ({ operation, amount: 50, noteId, at: AT, requestId: null })

t.test('an import hold is an orphan only past the lease and only when its note does not exist', async (t) => {
  const reservations = { r1: hold('import', 'n1'), r2: hold('import', 'n2'), r3: hold('analysis', 'n3') }
  t.same(ownerNotesToCheck(reservations), ['n1', 'n2'], 'only note-owned holds need a look-up')
  t.same(orphanHolds(reservations, AT, LEASE, () => false), [], 'within the lease nothing is an orphan')
  const orphans = orphanHolds(reservations, LATER, LEASE, (id) => id === 'n1')
  t.same(orphans.map((h) => h.reservationId), ['r2', 'r3'], 'the import with its note stays (the note settles it); the other two are orphans')
})

t.test('the auditor reports an orphaned hold as a problem, and not once it is released', async (t) => {
  const ledger = recorder(ledgerDecider)
  const run = ledger.run
  run({ type: 'OpenCreditAccount', accountId: 'a', plan: 'pro', now: AT })
  run({ type: 'ReserveCredits', reservationId: 'r1', operation: 'import', amount: 50, noteId: 'n1', now: AT })
  let balance = 0
  const lines = () =>
    ledger.events.flatMap((e, i) => {
      if (e.type === 'CreditAccountOpened') return []
      balance = 'balanceAfter' in e.data ? e.data.balanceAfter : balance
      return [{ _id: `e${i}`, revision: i, delta: 0, balanceAfter: balance }]
    })
  const audit = (now: string) => {
    const rm = lines()
    const withIds = ledger.events.map((event, i) => ({ id: `e${i}`, revision: i, event }))
    const r = auditLedger(withIds, { lines: rm, balance: ledger.state.balance }, { now, leaseMs: LEASE, noteExists: () => false })
    return { orphans: r.orphanHolds.map((h) => h.reservationId), owner: r.problems.filter((p) => /owner never appeared/.test(p)) }
  }
  t.same(audit(AT), { orphans: [], owner: [] })
  t.match(audit(LATER), { orphans: ['r1'], owner: [/hold r1 \(import, 50 credits, note n1\) is older than the lease/] })
  run({ type: 'ReleaseReservation', reservationId: 'r1', reason: 'swept', now: LATER })
  t.same(audit(LATER), { orphans: [], owner: [] })
})
