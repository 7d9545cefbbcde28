// The credit ledger decider, as given events / when command / then events or error.
import t from 'tap'
import { fold } from '../domain/decider.ts'
import { DomainError } from '../domain/errors.ts'
import { ledgerDecider, type CreditCommand, type CreditEvent } from '../domain/credits/ledger.ts'

const NOW = '2026-11-10T10:00:00.000Z'
const given = (...commands: CreditCommand[]) => {
  let state = ledgerDecider.initialState()
  const events: CreditEvent[] = []
  for (const c of commands) {
    const out = ledgerDecider.decide(c, state)
    events.push(...out)
    state = fold(ledgerDecider, out, state)
  }
  return { state, events }
}
const open = (plan: 'free' | 'pro' = 'free'): CreditCommand => ({ type: 'OpenCreditAccount', accountId: 'acc', plan, now: NOW })
const charge = (chargeId: string, cost: number, now = NOW): CreditCommand => ({ type: 'ChargeCredits', chargeId, operation: 'ask', cost, noteId: 'n1', requestId: 'r1', now })
const when = (state: ReturnType<typeof given>['state'], c: CreditCommand) => ledgerDecider.decide(c, state)

t.test('opening an account grants the plan credits for the current month', async (t) => {
  const { events } = given(open('pro'))
  t.same(events.map((e) => e.type), ['CreditAccountOpened', 'CreditCycleStarted'])
  t.match(events[1]!.data, { cycle: '2026-11', granted: 5000, balanceAfter: 5000 })
  t.same(when(given(open()).state, open()), [], 'opening twice is a no-op')
})

t.test('a charge within the balance is recorded with the balance after it', async (t) => {
  const { state } = given(open())
  const [e] = when(state, charge('c1', 150))
  t.match(e, { type: 'CreditsCharged', data: { chargeId: 'c1', cost: 150, balanceAfter: 50, operation: 'ask', noteId: 'n1' } })
})

t.test('a charge above the balance is refused with balance and required', async (t) => {
  const { state } = given(open(), charge('c1', 150))
  t.throws(() => when(state, charge('c2', 60)), new DomainError('insufficient_credits', '', { balance: 50, required: 60 }))
  try {
    when(state, charge('c2', 60))
  } catch (e) {
    t.same((e as DomainError).extra, { balance: 50, required: 60 })
  }
})

t.test('a retried charge id changes nothing', async (t) => {
  const { state } = given(open(), charge('c1', 10))
  t.same(when(state, charge('c1', 10)), [])
})

t.test('a new month starts a new cycle: unused credits expire, no carry-over', async (t) => {
  const { state } = given(open(), charge('c1', 150))
  const events = when(state, charge('c2', 20, '2026-12-01T00:00:01.000Z'))
  t.same(events.map((e) => e.type), ['CreditCycleStarted', 'CreditsCharged'])
  t.match(events[0]!.data, { cycle: '2026-12', expired: 50, granted: 200, balanceAfter: 200 })
  t.match(events[1]!.data, { balanceAfter: 180 })
})

t.test('reserve, capture more than the hold when the balance covers it, and refund once', async (t) => {
  const { state } = given(open(), { type: 'ReserveCredits', reservationId: 'r1', operation: 'import', amount: 50, noteId: 'n1', now: NOW })
  t.equal(state.balance, 150)
  t.throws(() => when(state, { type: 'CaptureReservation', reservationId: 'r1', cost: 250, now: NOW }), { code: 'insufficient_credits' })
  const captured = given(
    open(),
    { type: 'ReserveCredits', reservationId: 'r1', operation: 'import', amount: 50, noteId: 'n1', now: NOW },
    { type: 'CaptureReservation', reservationId: 'r1', cost: 100, now: NOW },
  )
  t.equal(captured.state.balance, 100)
  t.same(when(captured.state, { type: 'CaptureReservation', reservationId: 'r1', cost: 100, now: NOW }), [], 'capture is idempotent')
  t.throws(() => when(captured.state, { type: 'ReleaseReservation', reservationId: 'r1', reason: 'x', now: NOW }), { code: 'conflict' })
  const refunded = given(
    open(),
    { type: 'ReserveCredits', reservationId: 'r1', operation: 'import', amount: 50, noteId: 'n1', now: NOW },
    { type: 'CaptureReservation', reservationId: 'r1', cost: 100, now: NOW },
    { type: 'RefundCharge', refundId: 'f1', chargeId: 'r1', reason: 'transcription failed', now: NOW },
  )
  t.equal(refunded.state.balance, 200)
  t.throws(() => when(refunded.state, { type: 'RefundCharge', refundId: 'f2', chargeId: 'r1', reason: 'again', now: NOW }), { code: 'conflict' }, 'a charge is refunded at most once')
  t.same(when(refunded.state, { type: 'RefundCharge', refundId: 'f1', chargeId: 'r1', reason: 'retry', now: NOW }), [], 'a retried refund id is a no-op')
})

t.test('releasing a reservation gives the hold back', async (t) => {
  const { state } = given(
    open(),
    { type: 'ReserveCredits', reservationId: 'r1', operation: 'import', amount: 50, now: NOW },
    { type: 'ReleaseReservation', reservationId: 'r1', reason: 'link rejected', now: NOW },
  )
  t.equal(state.balance, 200)
})

t.test('upgrading the plan adds the difference; downgrading never goes below zero', async (t) => {
  const { state } = given(open(), charge('c1', 190))
  const [up] = when(state, { type: 'ChangePlan', plan: 'pro', now: NOW })
  t.match(up, { type: 'CreditPlanChanged', data: { from: 'free', to: 'pro', adjustment: 4800, balanceAfter: 4810 } })
  const pro = given(open('pro'), charge('c1', 4900))
  const [down] = when(pro.state, { type: 'ChangePlan', plan: 'free', now: NOW })
  t.match(down, { data: { balanceAfter: 0 } })
})

t.test('amounts must be non-negative integers', async (t) => {
  const { state } = given(open())
  t.throws(() => when(state, charge('c1', -5)), { code: 'invalid_request' })
  t.throws(() => when(state, charge('c1', 1.5)), { code: 'invalid_request' })
})

t.test('the state that remembers every charge stays cheap to fold as an account grows', async (t) => {
  let state = given(open('pro')).state
  for (let i = 0; i < 3000; i++) state = fold(ledgerDecider, ledgerDecider.decide(charge(`c${i}`, 1), state), state)
  t.equal(state.seenCharges.size, 3000)
  const shardSizes = state.seenCharges.shards.map((shard) => (shard ? Object.keys(shard).length : 0))
  t.ok(shardSizes.every((n) => n < 3000 / 10), 'no shard holds more than a tenth of the ids, so a write copies little')
  t.same(ledgerDecider.decide(charge('c1234', 1), state), [], 'a retried charge id is still recognised')
  t.equal(ledgerDecider.decide(charge('new', 1), state).length, 1)
})

t.test('a multi-part hold: each part captured out of it (refundable alone), the rest released; replay equals the balance', async (t) => {
  const reserve: CreditCommand = { type: 'ReserveCredits', reservationId: 'h1', operation: 'analysis', amount: 300, noteId: 'n1', now: NOW }
  const part = (p: string): CreditCommand => ({ type: 'CaptureReservation', reservationId: 'h1', cost: 100, part: p, now: NOW })
  const { state, events } = given(open('pro'), reserve, part('generic'), part('sales'))
  t.equal(state.balance, 4700, 'captures of parts do not move the balance again')
  t.equal(state.reservations.h1!.amount, 100, 'one part is still held')
  t.match(events.at(-1), { type: 'CreditsCaptured', data: { part: 'sales', reserved: 100, cost: 100, balanceAfter: 4700 } })
  t.same(when(state, part('sales')), [], 'a part is captured once')
  t.throws(() => when(state, { type: 'CaptureReservation', reservationId: 'h1', cost: 200, part: 'legal', now: NOW }), { code: 'conflict' }, 'a part cannot take more than is held')
  const released = given(open('pro'), reserve, part('generic'), part('sales'), { type: 'ReleaseReservation', reservationId: 'h1', reason: 'legal failed', now: NOW })
  t.match(released.events.at(-1), { type: 'CreditsReleased', data: { amount: 100, balanceAfter: 4800 } })
  const refunded = given(open('pro'), reserve, part('generic'), part('sales'), { type: 'ReleaseReservation', reservationId: 'h1', reason: 'x', now: NOW }, {
    type: 'RefundCharge',
    refundId: 'f1',
    chargeId: 'h1#sales',
    reason: 'not stored',
    now: NOW,
  })
  t.equal(refunded.state.balance, 4900)
  const all = given(open('pro'), reserve, part('a'), part('b'), part('c'))
  t.equal(all.state.balance, 4700)
  t.notOk(all.state.reservations.h1, 'the last part closes the hold')
})

t.test('a hold is extended when the real price is known, refused when the balance does not cover it', async (t) => {
  const { state } = given(open(), { type: 'ReserveCredits', reservationId: 'r1', operation: 'import', amount: 50, noteId: 'n1', now: NOW })
  const [e] = when(state, { type: 'ExtendReservation', reservationId: 'r1', amount: 150, reason: '3 minutes', now: NOW })
  t.match(e, { type: 'CreditsHoldExtended', data: { by: 100, amount: 150, balanceAfter: 50 } })
  t.throws(() => when(state, { type: 'ExtendReservation', reservationId: 'r1', amount: 250, reason: '5 minutes', now: NOW }), { code: 'insufficient_credits' })
  t.same(when(state, { type: 'ExtendReservation', reservationId: 'r1', amount: 50, reason: 'same', now: NOW }), [])
})
