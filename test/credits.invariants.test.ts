// Issue 14, items 1 and 2: the ledger's invariants and its hash chain, checked from events alone
// (pure domain functions). Given an honest history decided by the ledger decider, when one event
// is forged, then the check names the rule, the stream and the revision.
import t from 'tap'
import { recorder } from './support/decider.ts'
import { ledgerDecider, type CreditEvent } from '../domain/credits/ledger.ts'
import { checkLedgerInvariants, violationLine, type LedgerRule } from '../domain/credits/invariants.ts'
import { canonicalJson, chainEvents, ledgerEventHash, verifyChain } from '../domain/credits/chain.ts'
import { priceMismatch } from '../domain/credits/prices.ts'

const NOW = '2026-11-10T10:00:00.000Z'
const STREAM = 'credits-acc'
const honest = () => {
  const ledger = recorder(ledgerDecider)
  const run = ledger.run
  run({ type: 'OpenCreditAccount', accountId: 'acc', plan: 'pro', now: NOW }) // r0, r1
  run({ type: 'ChargeCredits', chargeId: 'c1', operation: 'ask', cost: 10, now: NOW }) // r2
  run({ type: 'ReserveCredits', reservationId: 'h1', operation: 'analysis', amount: 300, noteId: 'n1', now: NOW }) // r3
  run({ type: 'CaptureReservation', reservationId: 'h1', cost: 100, part: 'summary', now: NOW }) // r4
  run({ type: 'ReleaseReservation', reservationId: 'h1', reason: 'two templates failed', now: NOW }) // r5
  run({ type: 'RefundCharge', refundId: 'f1', chargeId: 'c1', reason: 'ask failed', now: NOW }) // r6
  run({ type: 'ReserveCredits', reservationId: 'h2', operation: 'import', amount: 50, noteId: 'n2', now: NOW }) // r7
  run({ type: 'ExtendReservation', reservationId: 'h2', amount: 150, reason: '3 minutes', now: NOW }) // r8
  run({ type: 'CaptureReservation', reservationId: 'h2', cost: 150, now: NOW }) // r9
  return ledger.events.map((event, revision) => ({ revision, event }))
}
type Rec = ReturnType<typeof honest>[number]
const check = (events: Rec[], extra = {}) => checkLedgerInvariants(STREAM, events, extra)
const rules = (events: Rec[]) => check(events).violations.map((v) => `${v.rule}@${v.revision}`)
/** Appends a forged event at the end, linked onto the chain as the system would (only the invariants can catch it). */
const append = (events: Rec[], e: CreditEvent): Rec[] => {
  const head = (events.at(-1)!.event.data.hash as string) ?? null
  return [...events, { revision: events.length, event: chainEvents([e], head)[0]! }]
}
const balance = (events: Rec[]) => (events.at(-1)!.event.data as { balanceAfter: number }).balanceAfter

t.test('an honest history decided by the ledger breaks no invariant and is chained from r0', async (t) => {
  const h = honest()
  const r = check(h)
  t.same(r.violations, [])
  t.equal(r.chain.startsAt, 0)
  t.equal(r.chain.head?.revision, 9)
  t.match(r.chain.head?.hash, /^[0-9a-f]{64}$/)
})

t.test('each forged event names its rule, stream and revision', async (t) => {
  const h = honest()
  const b = balance(h)
  const cases: [string, CreditEvent, LedgerRule][] = [
    ['a charge id used twice', { type: 'CreditsCharged', data: { chargeId: 'c1', operation: 'ask', cost: 10, noteId: null, requestId: null, balanceAfter: b - 10, at: NOW } }, 'unique-id'],
    ['a second refund of one charge', { type: 'CreditsRefunded', data: { refundId: 'f2', chargeId: 'c1', operation: 'ask', amount: 10, noteId: null, reason: 'x', balanceAfter: b + 10, at: NOW } }, 'refund-twice'],
    ['a refund id used twice', { type: 'CreditsRefunded', data: { refundId: 'f1', chargeId: 'h2', operation: 'import', amount: 150, noteId: null, reason: 'x', balanceAfter: b + 150, at: NOW } }, 'unique-id'],
    ['a refund larger than its charge', { type: 'CreditsRefunded', data: { refundId: 'f3', chargeId: 'h1#summary', operation: 'analysis', amount: 500, noteId: null, reason: 'x', balanceAfter: b + 500, at: NOW } }, 'refund-exceeds-charge'],
    ['a refund of a charge never made', { type: 'CreditsRefunded', data: { refundId: 'f4', chargeId: 'nope', operation: 'ask', amount: 10, noteId: null, reason: 'x', balanceAfter: b + 10, at: NOW } }, 'refund-unknown-charge'],
    ['a second grant in one cycle', { type: 'CreditCycleStarted', data: { cycle: '2026-11', plan: 'pro', granted: 5000, expired: b, balanceAfter: 5000, at: NOW } }, 'grant-once-per-cycle'],
    ['a grant that is not the plan', { type: 'CreditCycleStarted', data: { cycle: '2026-12', plan: 'pro', granted: 9000, expired: b, balanceAfter: 9000, at: '2026-12-01T00:00:00.000Z' } }, 'grant-per-plan'],
    ['a charge off the price table', { type: 'CreditsCharged', data: { chargeId: 'c9', operation: 'ask', cost: 7, noteId: null, requestId: null, balanceAfter: b - 7, at: NOW } }, 'price'],
    ['an unpriced operation', { type: 'CreditsCharged', data: { chargeId: 'c9', operation: 'gift', cost: 1, noteId: null, requestId: null, balanceAfter: b - 1, at: NOW } }, 'price'],
    ['a capture of a reservation never made', { type: 'CreditsCaptured', data: { reservationId: 'zz', operation: 'import', reserved: 50, cost: 50, noteId: null, balanceAfter: b, at: NOW } }, 'unknown-reservation'],
    ['a second capture of a captured hold', { type: 'CreditsCaptured', data: { reservationId: 'h2', operation: 'import', reserved: 150, cost: 150, noteId: null, balanceAfter: b, at: NOW } }, 'unique-id'],
    ['a release of a released hold', { type: 'CreditsReleased', data: { reservationId: 'h1', operation: 'analysis', amount: 200, noteId: null, reason: 'x', balanceAfter: b + 200, at: NOW } }, 'unique-id'],
    ['a balance that does not follow from the amounts', { type: 'CreditsCharged', data: { chargeId: 'c9', operation: 'ask', cost: 10, noteId: null, requestId: null, balanceAfter: b, at: NOW } }, 'balance-arithmetic'],
  ]
  for (const [label, e, rule] of cases) {
    const forged = append(h, e)
    const vs = check(forged).violations
    t.same(vs.map((v) => [v.rule, v.stream, v.revision]), [[rule, STREAM, 10]], label)
    t.comment(violationLine(vs[0]!))
  }
})

t.test('captures beyond the hold, a negative balance, a revision gap', async (t) => {
  const h = honest()
  const b = balance(h)
  const hold = append(h, { type: 'CreditsReserved', data: { reservationId: 'h3', operation: 'analysis', amount: 100, noteId: null, requestId: null, balanceAfter: b - 100, at: NOW } })
  const over = append(hold, { type: 'CreditsCaptured', data: { reservationId: 'h3', operation: 'analysis', reserved: 200, cost: 200, noteId: null, part: 'a', balanceAfter: b - 100, at: NOW } })
  t.same(rules(over), ['capture-exceeds-reservation@11'])
  const spent = append(h, { type: 'CreditsCharged', data: { chargeId: 'big', operation: 'clip', cost: b + 5, noteId: null, requestId: null, balanceAfter: -5, at: NOW } })
  t.same(rules(spent), ['balance-negative@10'])
  // Deleting r4 leaves a hole in the revisions and breaks the chain at r5.
  const gap = rules(h.filter((r) => r.revision !== 4))
  t.ok(gap.includes('revision-gap@5'), gap.join(' '))
  t.ok(gap.includes('hash-chain@5'))
})

t.test('a hold past its lease with no owner breaks hold-lease at its reservation', async (t) => {
  const h = honest()
  const b = balance(h)
  const held = append(h, { type: 'CreditsReserved', data: { reservationId: 'h4', operation: 'ask', amount: 10, noteId: null, requestId: null, balanceAfter: b - 10, at: NOW } })
  const holds = (now: string) => check(held, { holds: { now, leaseMs: 60_000, noteExists: () => false } }).violations.map((v) => `${v.rule}@${v.revision}`)
  t.same(holds(NOW), [], 'within the lease')
  t.same(holds('2026-11-10T10:05:00.000Z'), ['hold-lease@10'], 'past it')
})

t.test('a pending capture past its lease, neither completed nor refunded, breaks hold-lease at the capture', async (t) => {
  const h = honest()
  const b = balance(h)
  const held = append(h, { type: 'CreditsReserved', data: { reservationId: 'h5', operation: 'analysis', amount: 100, noteId: 'n1', requestId: null, balanceAfter: b - 100, at: NOW } })
  const captured = append(held, { type: 'CreditsCaptured', data: { reservationId: 'h5', operation: 'analysis', reserved: 100, cost: 100, noteId: 'n1', part: 'generic', pending: true, balanceAfter: b - 100, at: NOW } })
  const lease = (events: Rec[], now: string) => check(events, { holds: { now, leaseMs: 60_000, noteExists: () => false } }).violations.map((v) => `${v.rule}@${v.revision}`)
  t.same(lease(captured, NOW), [], 'within the lease')
  t.same(lease(captured, '2026-11-10T10:05:00.000Z'), ['hold-lease@11'], 'past it')
  const refunded = append(captured, { type: 'CreditsRefunded', data: { refundId: 'f9', chargeId: 'h5#generic', operation: 'analysis', amount: 100, noteId: 'n1', reason: 'analysis never completed within the lease (60 s)', balanceAfter: b, at: NOW } })
  t.same(lease(refunded, '2026-11-10T10:05:00.000Z'), [], 'refunded: settled')
  const completed = append(captured, { type: 'CreditsChargeCompleted', data: { chargeId: 'h5#generic', at: NOW } })
  t.same(lease(completed, '2026-11-10T10:05:00.000Z'), [], 'completed: settled')
})

t.test('the hash chain: a consistent rewrite is caught at the rewritten event, a recomputed one at the next, anything by an anchor', async (t) => {
  const h = honest()
  // Rewrite the ask charge r2 to 20 and every later balance consistently (arithmetic holds).
  const rewritten = h.map((r) => {
    const d = r.event.data as Record<string, unknown>
    if (r.revision === 2) return { ...r, event: { ...r.event, data: { ...d, cost: 20, balanceAfter: (d.balanceAfter as number) - 10 } } as CreditEvent }
    if (r.revision > 2 && typeof d.balanceAfter === 'number') return { ...r, event: { ...r.event, data: { ...d, balanceAfter: d.balanceAfter - 10 } } as CreditEvent }
    return r
  })
  const vs = rules(rewritten)
  t.ok(vs.includes('hash-chain@2'), 'the rewritten charge no longer matches its hash')
  t.ok(vs.includes('price@2'), 'and its price is off the table')
  t.notOk(vs.some((v) => v.startsWith('balance-arithmetic')), 'the arithmetic was kept consistent')

  // A forger who recomputes every hash after the edit: the chain is whole again, the head differs.
  const relinked = rewritten.slice(0, 2).concat(
    chainEvents(
      rewritten.slice(2).map((r) => {
        const { hash: _, prevHash: __, ...data } = r.event.data as Record<string, unknown>
        return { ...r.event, data } as CreditEvent
      }),
      h[1]!.event.data.hash as string,
    ).map((event, i) => ({ revision: i + 2, event })),
  )
  t.same(verifyChain(relinked).breaks, [], 'a relinked chain verifies on its own')
  const anchor = check(h).chain.head!
  t.same(
    check(relinked, { anchors: [anchor] }).violations.filter((v) => v.rule === 'hash-chain').map((v) => v.revision),
    [9],
    'but not against the head anchored before the rewrite',
  )
  t.same(check(h, { anchors: [anchor] }).violations, [], 'the untouched ledger matches its anchor')
})

t.test('events written before the chain existed stay readable: the chain starts at the first hashed event', async (t) => {
  const h = honest()
  const legacy = h.map((r) => {
    if (r.revision >= 3) return r
    const { hash: _, prevHash: __, ...data } = r.event.data as Record<string, unknown>
    return { ...r, event: { ...r.event, data } as CreditEvent }
  })
  // r3 onwards keeps its links, but r3 names r2's (now stripped) hash as previous: re-chain from r3.
  const rechained = legacy.slice(0, 3).concat(
    chainEvents(
      legacy.slice(3).map((r) => {
        const { hash: _, prevHash: __, ...data } = r.event.data as Record<string, unknown>
        return { ...r.event, data } as CreditEvent
      }),
      null,
    ).map((event, i) => ({ revision: i + 3, event })),
  )
  const r = check(rechained)
  t.same(r.violations, [])
  t.equal(r.chain.startsAt, 3)
  const stripped = rechained.map((x) => {
    if (x.revision !== 6) return x
    const { hash: _, ...data } = x.event.data as Record<string, unknown>
    return { ...x, event: { ...x.event, data } as CreditEvent }
  })
  t.ok(rules(stripped).includes('hash-chain@6'), 'an unhashed event after the chain began is a break')
})

t.test('canonical JSON and the price table', async (t) => {
  t.equal(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: undefined }], c: null } }), '{"a":{"c":null,"d":[1,{"f":2}]},"b":1}')
  t.equal(ledgerEventHash('X', { a: 1, hash: 'ignored' }), ledgerEventHash('X', { a: 1 }))
  t.equal(priceMismatch('ask', 10, NOW), null)
  t.equal(priceMismatch('import', 150, NOW), null)
  t.match(priceMismatch('import', 120, NOW), /positive multiple of 50/)
  t.match(priceMismatch('transcript', 2, NOW), /asks 1$/)
})

t.test("price: an import's capture is held against the decoded length its note records (issue 26, item 3)", async (t) => {
  const h = honest() // n2's import captured 150 (3 started minutes), r9
  t.same(check(h, { decodedSeconds: new Map([['n2', 152.7]]) }).violations, [], '152.7 s decoded: 150 is right')
  const lied = check(h, { decodedSeconds: new Map([['n2', 1.4]]) }).violations
  t.match(lied, [{ rule: 'price', revision: 9, message: /captures 150 for note n2, whose decoded audio lasts 1\.4 s: 50 per started minute asks 50/ }])
  // The lying MP3 as it was billed: 50 captured for audio that decodes 152.7 s.
  const ledger = recorder(ledgerDecider)
  ledger.run({ type: 'OpenCreditAccount', accountId: 'acc', plan: 'pro', now: NOW })
  ledger.run({ type: 'ReserveCredits', reservationId: 'h9', operation: 'import', amount: 50, noteId: 'n9', now: NOW })
  ledger.run({ type: 'CaptureReservation', reservationId: 'h9', cost: 50, now: NOW })
  const billed = ledger.events.map((event, revision) => ({ revision, event }))
  t.same(check(billed).violations, [], 'without the decoded length, 50 is a price of the table')
  t.match(check(billed, { decodedSeconds: new Map([['n9', 152.7]]) }).violations, [{ rule: 'price', revision: 3, message: /decoded audio lasts 152\.7 s: 50 per started minute asks 150/ }])
})
