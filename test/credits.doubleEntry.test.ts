// Issue 14, item 4: the ledger as double entry. Given a history with a grant, charges, a
// multi-part hold, an import hold extended and captured, a refund, a plan change and a new cycle,
// every entry balances, the statement sums to zero, `balance` ends at the replayed balance and
// `held` at what is still held; the CSV carries one line per posting and a total per account.
import t from 'tap'
import { recorder } from './support/decider.ts'
import { ledgerDecider } from '../domain/credits/ledger.ts'
import { doubleEntry, doubleEntryCsv } from '../domain/credits/doubleEntry.ts'

const NOW = '2026-11-10T10:00:00.000Z'
const NEXT = '2026-12-02T10:00:00.000Z'

t.test('every entry balances and the statement sums to zero', async (t) => {
  const ledger = recorder(ledgerDecider)
  const run = ledger.run
  run({ type: 'OpenCreditAccount', accountId: 'acc', plan: 'pro', now: NOW })
  run({ type: 'ChargeCredits', chargeId: 'c1', operation: 'ask', cost: 10, now: NOW })
  run({ type: 'ChargeCredits', chargeId: 'c2', operation: 'transcript', cost: 1, pending: true, now: NOW })
  run({ type: 'FailCharge', chargeId: 'c2', reason: 'disk on fire', now: NOW })
  run({ type: 'RefundCharge', refundId: 'f2', chargeId: 'c2', reason: 'transcript failed', now: NOW })
  run({ type: 'ReserveCredits', reservationId: 'h1', operation: 'analysis', amount: 300, now: NOW })
  run({ type: 'CaptureReservation', reservationId: 'h1', cost: 100, part: 'summary', now: NOW })
  run({ type: 'ReleaseReservation', reservationId: 'h1', reason: 'two failed', now: NOW })
  run({ type: 'ReserveCredits', reservationId: 'h2', operation: 'import', amount: 50, noteId: 'n1', now: NOW })
  run({ type: 'ExtendReservation', reservationId: 'h2', amount: 150, reason: '3 min', now: NOW })
  run({ type: 'CaptureReservation', reservationId: 'h2', cost: 150, now: NOW })
  run({ type: 'ReserveCredits', reservationId: 'h3', operation: 'import', amount: 50, noteId: 'n2', now: NOW })
  run({ type: 'ChangePlan', plan: 'personal', now: NOW })
  run({ type: 'ChargeCredits', chargeId: 'c3', operation: 'clip', cost: 5, now: NEXT })
  const d = doubleEntry(ledger.events.map((event, revision) => ({ revision, event })))
  t.same(d.unbalanced, [], 'every entry balances')
  t.equal(d.sum, 0, 'the statement sums to zero')
  const total = Object.fromEntries(d.totals.map((x) => [x.account, x.amount]))
  t.equal(total.balance, ledger.state.balance, 'balance ends at the replayed balance')
  t.equal(total.held, 50, 'held ends at what is still held (h3)')
  t.same(total, {
    balance: 995,
    expiry: 690, // what was left of November (5000 - 10 - 100 - 150 - 50 held - 4000 by the plan change) when December began
    grants: -(5000 + 1000),
    held: 50,
    'plan-changes': 4000,
    refunds: -1,
    'spending:analysis': 100,
    'spending:ask': 10,
    'spending:clip': 5,
    'spending:import': 150,
    'spending:transcript': 1,
  })
  const csv = doubleEntryCsv('credits-acc', d).trimEnd().split('\n')
  t.equal(csv[0], 'stream,revision,at,type,reference,account,debit,credit')
  t.equal(csv.length, 1 + d.postings.length + d.totals.length)
  t.ok(csv.includes('credits-acc,,,total,,grants,,6000'))
  t.comment(csv.slice(-d.totals.length).join('\n'))
})
