// The credit ledger decider, as given events / when command / then events or error, on the shared
// DeciderSpecification (test/support/decider.ts).
import t from 'tap'
import { fold } from '../domain/decider.ts'
import { ledgerDecider, type CreditCommand, type CreditEvent } from '../domain/credits/ledger.ts'
import { DeciderSpecification } from './support/decider.ts'
import { refundsDue } from '../domain/credits/refunds.ts'

/**
 * The decider's events without the hash chain's fields (`prevHash`, `hash`): the specs here are
 * about amounts and ids; the chain has its own test below and in credits.invariants/tamper.
 */
const withoutChain = (e: CreditEvent): CreditEvent => {
  const { prevHash: _prev, hash: _hash, ...data } = e.data as CreditEvent['data'] & { prevHash?: unknown; hash?: unknown }
  return { ...e, data } as CreditEvent
}
const ledger = DeciderSpecification.for({ ...ledgerDecider, decide: (c: CreditCommand, state: Parameters<typeof ledgerDecider.decide>[1]) => ledgerDecider.decide(c, state).map(withoutChain) })
const NOW = '2026-11-10T10:00:00.000Z'
const at = NOW

// ---- history (events as stored) --------------------------------------------------------------
const opened = (plan: 'free' | 'pro' = 'free'): CreditEvent[] => [
  { type: 'CreditAccountOpened', data: { accountId: 'acc', plan, at } },
  { type: 'CreditCycleStarted', data: { cycle: '2026-11', plan, granted: plan === 'pro' ? 5000 : 200, expired: 0, balanceAfter: plan === 'pro' ? 5000 : 200, at } },
]
const charged = (chargeId: string, cost: number, balanceAfter: number): CreditEvent => ({
  type: 'CreditsCharged',
  data: { chargeId, operation: 'ask', cost, noteId: 'n1', requestId: 'r1', balanceAfter, at },
})
const reserved = (balanceAfter: number, noteId: string | null = 'n1'): CreditEvent => ({
  type: 'CreditsReserved',
  data: { reservationId: 'r1', operation: 'import', amount: 50, noteId, requestId: null, balanceAfter, at },
})
const captured = (cost: number, balanceAfter: number): CreditEvent => ({
  type: 'CreditsCaptured',
  data: { reservationId: 'r1', operation: 'import', reserved: 50, cost, noteId: 'n1', balanceAfter, at },
})

// ---- commands --------------------------------------------------------------------------------
const open = (plan: 'free' | 'pro' = 'free'): CreditCommand => ({ type: 'OpenCreditAccount', accountId: 'acc', plan, now: NOW })
const charge = (chargeId: string, cost: number, now = NOW): CreditCommand => ({ type: 'ChargeCredits', chargeId, operation: 'ask', cost, noteId: 'n1', requestId: 'r1', now })
const reserve: CreditCommand = { type: 'ReserveCredits', reservationId: 'r1', operation: 'import', amount: 50, noteId: 'n1', now: NOW }

t.test('opening an account grants the plan credits for the current month', async (t) => {
  ledger.given([]).when(open('pro')).then(t, opened('pro'))
  ledger.given(opened()).when(open()).thenNothingHappened(t, 'opening twice is a no-op')
  ledger.given([]).when(charge('c1', 1)).thenThrows(t, 'not_found', /no credit ledger/)
})

t.test('a charge within the balance is recorded with the balance after it', async (t) => {
  ledger.given(opened()).when(charge('c1', 150)).then(t, [charged('c1', 150, 50)])
})

t.test('a charge above the balance is refused with balance and required', async (t) => {
  ledger.given([...opened(), charged('c1', 150, 50)]).when(charge('c2', 60)).thenThrows(t, 'insufficient_credits', undefined, { balance: 50, required: 60 })
})

t.test('a retried charge id changes nothing', async (t) => {
  ledger.given([...opened(), charged('c1', 10, 190)]).when(charge('c1', 10)).thenNothingHappened(t)
})

t.test('a new month starts a new cycle: unused credits expire, no carry-over', async (t) => {
  ledger
    .given([...opened(), charged('c1', 150, 50)])
    .when(charge('c2', 20, '2026-12-01T00:00:01.000Z'))
    .thenMatches(t, [
      { type: 'CreditCycleStarted', data: { cycle: '2026-12', expired: 50, granted: 200, balanceAfter: 200 } },
      { type: 'CreditsCharged', data: { balanceAfter: 180 } },
    ])
})

t.test('reserve, capture more than the hold when the balance covers it, and refund once', async (t) => {
  ledger.given(opened()).when(reserve).then(t, [reserved(150)])
  ledger.given([...opened(), reserved(150)]).when(reserve).thenNothingHappened(t, 'a retried reservation id is a no-op')
  t.equal(ledger.given([...opened(), reserved(150)]).state().balance, 150)
  ledger.given([...opened(), reserved(150)]).when({ type: 'CaptureReservation', reservationId: 'r1', cost: 250, now: NOW }).thenThrows(t, 'insufficient_credits')
  ledger.given([...opened(), reserved(150)]).when({ type: 'CaptureReservation', reservationId: 'r1', cost: 100, now: NOW }).then(t, [captured(100, 100)])
  const afterCapture = [...opened(), reserved(150), captured(100, 100)]
  ledger.given(afterCapture).when({ type: 'CaptureReservation', reservationId: 'r1', cost: 100, now: NOW }).thenNothingHappened(t, 'capture is idempotent')
  ledger.given(afterCapture).when({ type: 'ReleaseReservation', reservationId: 'r1', reason: 'x', now: NOW }).thenThrows(t, 'conflict', /captured/)
  ledger.given(opened()).when({ type: 'CaptureReservation', reservationId: 'nope', cost: 1, now: NOW }).thenThrows(t, 'conflict', /unknown/)
  const refunded: CreditEvent = {
    type: 'CreditsRefunded',
    data: { refundId: 'f1', chargeId: 'r1', operation: 'import', amount: 100, noteId: 'n1', reason: 'transcription failed', balanceAfter: 200, at },
  }
  ledger.given(afterCapture).when({ type: 'RefundCharge', refundId: 'f1', chargeId: 'r1', reason: 'transcription failed', now: NOW }).then(t, [refunded])
  ledger.given([...afterCapture, refunded]).when({ type: 'RefundCharge', refundId: 'f2', chargeId: 'r1', reason: 'again', now: NOW }).thenThrows(t, 'conflict', /already refunded/)
  ledger.given([...afterCapture, refunded]).when({ type: 'RefundCharge', refundId: 'f1', chargeId: 'r1', reason: 'retry', now: NOW }).thenNothingHappened(t, 'a retried refund id is a no-op')
  ledger.given(opened()).when({ type: 'RefundCharge', refundId: 'f3', chargeId: 'ghost', reason: 'x', now: NOW }).thenThrows(t, 'conflict', /does not exist/)
})

t.test('releasing a reservation gives the hold back', async (t) => {
  const release: CreditCommand = { type: 'ReleaseReservation', reservationId: 'r1', reason: 'link rejected', now: NOW }
  const released: CreditEvent = {
    type: 'CreditsReleased',
    data: { reservationId: 'r1', operation: 'import', amount: 50, noteId: null, reason: 'link rejected', balanceAfter: 200, at },
  }
  ledger.given([...opened(), reserved(150, null)]).when(release).then(t, [released])
  ledger.given([...opened(), reserved(150, null), released]).when(release).thenNothingHappened(t, 'releasing twice is a retry')
  t.equal(ledger.given([...opened(), reserved(150, null), released]).state().balance, 200)
})

t.test('upgrading the plan adds the difference; downgrading never goes below zero', async (t) => {
  ledger
    .given([...opened(), charged('c1', 190, 10)])
    .when({ type: 'ChangePlan', plan: 'pro', now: NOW })
    .then(t, [{ type: 'CreditPlanChanged', data: { from: 'free', to: 'pro', adjustment: 4800, balanceAfter: 4810, at } }])
  ledger
    .given([...opened('pro'), charged('c1', 4900, 100)])
    .when({ type: 'ChangePlan', plan: 'free', now: NOW })
    .thenMatches(t, [{ type: 'CreditPlanChanged', data: { balanceAfter: 0 } }])
  ledger.given(opened()).when({ type: 'ChangePlan', plan: 'free', now: NOW }).thenNothingHappened(t, 'the same plan changes nothing')
})

t.test('amounts must be non-negative integers', async (t) => {
  ledger.given(opened()).when(charge('c1', -5)).thenThrows(t, 'invalid_request')
  ledger.given(opened()).when(charge('c1', 1.5)).thenThrows(t, 'invalid_request')
})

t.test('the state that remembers every charge stays cheap to fold as an account grows', async (t) => {
  let state = fold(ledgerDecider, opened('pro'))
  for (let i = 0; i < 3000; i++) state = fold(ledgerDecider, ledgerDecider.decide(charge(`c${i}`, 1), state), state)
  t.equal(state.seenCharges.size, 3000)
  const shardSizes = state.seenCharges.shards.map((shard) => (shard ? Object.keys(shard).length : 0))
  t.ok(shardSizes.every((n) => n < 3000 / 10), 'no shard holds more than a tenth of the ids, so a write copies little')
  t.same(ledgerDecider.decide(charge('c1234', 1), state), [], 'a retried charge id is still recognised')
  t.equal(ledgerDecider.decide(charge('new', 1), state).length, 1)
})

/** The events a series of accepted commands leaves, decided one after the other on the shared spec. */
const historyOf = (...commands: CreditCommand[]): CreditEvent[] => commands.reduce<CreditEvent[]>((events, c) => [...events, ...ledger.given(events).when(c).events()], [])

t.test('a multi-part hold: each part captured out of it (refundable alone), the rest released; replay equals the balance', async (t) => {
  const reserve: CreditCommand = { type: 'ReserveCredits', reservationId: 'h1', operation: 'analysis', amount: 300, noteId: 'n1', now: NOW }
  const part = (p: string): CreditCommand => ({ type: 'CaptureReservation', reservationId: 'h1', cost: 100, part: p, now: NOW })
  const events = historyOf(open('pro'), reserve, part('generic'), part('sales'))
  const state = ledger.given(events).state()
  t.equal(state.balance, 4700, 'captures of parts do not move the balance again')
  t.equal(state.reservations.h1!.amount, 100, 'one part is still held')
  t.match(events.at(-1), { type: 'CreditsCaptured', data: { part: 'sales', reserved: 100, cost: 100, balanceAfter: 4700 } })
  ledger.given(events).when(part('sales')).thenNothingHappened(t, 'a part is captured once')
  ledger.given(events).when({ type: 'CaptureReservation', reservationId: 'h1', cost: 200, part: 'legal', now: NOW }).thenThrows(t, 'conflict')
  const released = historyOf(open('pro'), reserve, part('generic'), part('sales'), { type: 'ReleaseReservation', reservationId: 'h1', reason: 'legal failed', now: NOW })
  t.match(released.at(-1), { type: 'CreditsReleased', data: { amount: 100, balanceAfter: 4800 } })
  const refunded = historyOf(open('pro'), reserve, part('generic'), part('sales'), { type: 'ReleaseReservation', reservationId: 'h1', reason: 'x', now: NOW }, {
    type: 'RefundCharge',
    refundId: 'f1',
    chargeId: 'h1#sales',
    reason: 'not stored',
    now: NOW,
  })
  t.equal(ledger.given(refunded).state().balance, 4900)
  const all = ledger.given(historyOf(open('pro'), reserve, part('a'), part('b'), part('c'))).state()
  t.equal(all.balance, 4700)
  t.notOk(all.reservations.h1, 'the last part closes the hold')
})

t.test('a pending capture is a pending charge: completed, or failed and refunded once by the manager, or refunded once the lease runs out', async (t) => {
  const reserve: CreditCommand = { type: 'ReserveCredits', reservationId: 'h1', operation: 'analysis', amount: 200, noteId: 'n1', now: NOW }
  const part = (p: string): CreditCommand => ({ type: 'CaptureReservation', reservationId: 'h1', cost: 100, part: p, pending: true, now: NOW })
  const captures = historyOf(open('pro'), reserve, part('generic'), part('sales'))
  t.match(captures.at(-1), { type: 'CreditsCaptured', data: { part: 'sales', pending: true, balanceAfter: 4800 } })
  const state = ledger.given(captures).state()
  t.same(Object.keys(state.openCharges).sort(), ['h1#generic', 'h1#sales'], 'each capture is open until its end is recorded')
  t.same(refundsDue(state, NOW, 60_000), [], 'nothing is due while the operation may still be running')
  const lease = refundsDue(state, '2026-11-10T10:01:00.000Z', 60_000)
  t.same(lease.map((d) => d.chargeId).sort(), ['h1#generic', 'h1#sales'], 'both are due once the lease has run out')

  const completed = historyOf(open('pro'), reserve, part('generic'), part('sales'), { type: 'CompleteCharge', chargeId: 'h1#generic', now: NOW }, { type: 'CompleteCharge', chargeId: 'h1#sales', now: NOW })
  t.same(ledger.given(completed).state().openCharges, {}, 'completed: nothing left to refund')
  t.same(refundsDue(ledger.given(completed).state(), '2026-11-11T00:00:00.000Z', 60_000), [])

  const failed = historyOf(open('pro'), reserve, part('generic'), { type: 'FailCharge', chargeId: 'h1#generic', reason: 'the analyses could not be stored', now: NOW })
  t.match(failed.at(-1), { type: 'CreditsChargeFailed', data: { chargeId: 'h1#generic', operation: 'analysis', reason: 'the analyses could not be stored' } })
  const due = refundsDue(ledger.given(failed).state(), NOW, 60_000)
  t.match(due, [{ chargeId: 'h1#generic', reason: /analysis failed: the analyses could not be stored/ }], 'a failure is due at once')
  const refund: CreditCommand = { type: 'RefundCharge', refundId: 'f1', chargeId: 'h1#generic', reason: due[0]!.reason, now: NOW }
  const refunded = [...failed, ...ledger.given(failed).when(refund).events()]
  t.match(refunded.at(-1), { type: 'CreditsRefunded', data: { chargeId: 'h1#generic', amount: 100 } })
  t.same(ledger.given(refunded).state().openCharges, {}, 'refunded: closed')
  ledger.given(refunded).when(refund).thenNothingHappened(t, 'the same refund again changes nothing')
  ledger.given(refunded).when({ type: 'CompleteCharge', chargeId: 'h1#generic', now: NOW }).thenNothingHappened(t, 'a late completion records nothing')
})

t.test('a hold is extended when the real price is known, refused when the balance does not cover it', async (t) => {
  const held = ledger.given(historyOf(open(), { type: 'ReserveCredits', reservationId: 'r1', operation: 'import', amount: 50, noteId: 'n1', now: NOW }))
  held.when({ type: 'ExtendReservation', reservationId: 'r1', amount: 150, reason: '3 minutes', now: NOW }).thenMatches(t, [{ type: 'CreditsHoldExtended', data: { by: 100, amount: 150, balanceAfter: 50 } }])
  held.when({ type: 'ExtendReservation', reservationId: 'r1', amount: 250, reason: '5 minutes', now: NOW }).thenThrows(t, 'insufficient_credits')
  held.when({ type: 'ExtendReservation', reservationId: 'r1', amount: 50, reason: 'same', now: NOW }).thenNothingHappened(t)
})

t.test('every event the ledger decides is chained to the one before it', async (t) => {
  const first = ledgerDecider.decide(open('pro'), fold(ledgerDecider, []))
  const state = fold(ledgerDecider, first)
  const [charged] = ledgerDecider.decide(charge('c1', 10), state)
  const data = (e: CreditEvent | undefined) => e!.data as { prevHash?: string | null; hash?: string }
  t.equal(data(first[0]).prevHash, null, 'the first event starts the chain')
  t.equal(data(first[1]).prevHash, data(first[0]).hash, 'the second names the first')
  t.equal(data(charged).prevHash, data(first[1]).hash, 'a later command continues the chain')
  t.match(data(charged).hash, /^[0-9a-f]{64}$/)
})
