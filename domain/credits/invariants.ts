// The ledger's invariants, checked from its events alone (no read model, no balance the events
// claim taken on trust). Each violation names its rule, the stream and the revision of the event
// that breaks it, so an auditor can go straight to it:
//   unique-id                 charge, reservation, capture, release and refund ids are used once
//   refund-unknown-charge     a refund names a charge of the same account that came before it
//   refund-twice              a charge is refunded at most once in total
//   refund-exceeds-charge     never more than the charge
//   unknown-reservation       captures, extensions and releases name a reservation that exists
//   capture-exceeds-reservation  what captures and the release take out of a hold <= what it held
//   grant-once-per-cycle      one CreditCycleStarted per calendar month, months in order
//   grant-per-plan            the grant is the plan's monthly credits; what expires is the balance
//   plan-change               the adjustment is the difference of the two plans' credits
//   price                     a charge or capture costs what the price table in force then asks;
//                             an import's capture costs what the decoded length its note records asks
//   revision-gap              revisions run 0, 1, 2, ... with none missing
//   hold-lease                every reservation (and pending charge) is settled or still within its lease
//   balance-arithmetic        each balanceAfter is the previous balance plus the event's amount
//   balance-negative          the balance never goes below zero
//   hash-chain                the tamper-evident chain (chain.ts) holds; anchors still match
import { capturedChargeId, evolveLedger, initialLedgerState, balanceDelta, type CreditEvent } from './ledger.ts'
import { MONTHLY_CREDITS, type Plan } from './plans.ts'
import { priceMismatch, PRICES } from './prices.ts'
import { minutesFor } from '../usage/usage.ts'
import { orphanHolds, orphanReason } from './holds.ts'
import { checkAnchors, verifyChain, type Anchor, type ChainReport } from './chain.ts'

export const LEDGER_RULES = [
  'unique-id',
  'refund-unknown-charge',
  'refund-twice',
  'refund-exceeds-charge',
  'unknown-reservation',
  'capture-exceeds-reservation',
  'grant-once-per-cycle',
  'grant-per-plan',
  'plan-change',
  'price',
  'revision-gap',
  'hold-lease',
  'balance-arithmetic',
  'balance-negative',
  'hash-chain',
] as const
export type LedgerRule = (typeof LEDGER_RULES)[number]

export interface Violation {
  rule: LedgerRule
  stream: string
  revision: number
  message: string
}

/** One line per violation, as the auditor prints it. */
export const violationLine = (v: Violation) => `VIOLATION ${v.rule} stream=${v.stream} revision=${v.revision}: ${v.message}`

export interface InvariantOptions {
  /** With these, open holds past their lease are violations (hold-lease). */
  holds?: { now: string; leaseMs: number; noteExists: (noteId: string) => boolean }
  /** Head hashes the operator kept outside the system. */
  anchors?: readonly Anchor[]
  /** The length of the decoded audio each note's events record (NoteReady.decodedSeconds), by note id. */
  decodedSeconds?: ReadonlyMap<string, number>
}

/** Why an import's capture disagrees with the decoded length of its note's audio, or null. */
export function decodedPriceMismatch(cost: number, noteId: string, decodedSeconds: number): string | null {
  const asked = PRICES.import.credits * minutesFor(decodedSeconds)
  if (cost === asked) return null
  return `captures ${cost} for note ${noteId}, whose decoded audio lasts ${decodedSeconds.toFixed(1)} s: ${PRICES.import.credits} per started minute asks ${asked}`
}

export interface InvariantReport {
  violations: Violation[]
  chain: ChainReport
}

export function checkLedgerInvariants(stream: string, events: readonly { revision: number; event: CreditEvent }[], opts: InvariantOptions = {}): InvariantReport {
  const out: Violation[] = []
  const v = (rule: LedgerRule, revision: number, message: string) => out.push({ rule, stream, revision, message })

  const charges = new Map<string, { revision: number; cost: number; refunded: number; refunds: number }>()
  const holds = new Map<string, { revision: number; held: number; taken: number; closed: 'captured' | 'released' | null }>()
  const refundIds = new Map<string, number>()
  /** Pending charges not yet completed or refunded (their operation ran after the charge). */
  const pending = new Map<string, { revision: number; at: string }>()
  const cycles = new Map<string, number>()
  let lastCycle: string | null = null
  let plan: Plan | null = null
  let balance = 0
  let expected = 0
  let state = initialLedgerState()

  for (const { revision, event: e } of events) {
    if (revision !== expected) {
      v('revision-gap', revision, revision > expected ? `r${revision} follows r${expected - 1}: ${revision - expected} event(s) missing` : `r${revision} repeats or goes back (expected r${expected})`)
    }
    expected = revision + 1
    const delta = balanceDelta(e, balance)
    const before = balance
    balance += delta
    if ('balanceAfter' in e.data && e.data.balanceAfter !== balance) v('balance-arithmetic', revision, `${e.type} claims balance ${e.data.balanceAfter}, the amounts give ${balance}`)
    if (balance < 0) v('balance-negative', revision, `the balance is ${balance} after ${e.type}`)

    const charge = (id: string, cost: number, what: string) => {
      const seen = charges.get(id)
      if (seen) v('unique-id', revision, `${what} ${id} was already used at r${seen.revision}`)
      else charges.set(id, { revision, cost, refunded: 0, refunds: 0 })
    }
    switch (e.type) {
      case 'CreditAccountOpened':
        plan = e.data.plan
        break
      case 'CreditCycleStarted': {
        const first = cycles.get(e.data.cycle)
        if (first !== undefined) v('grant-once-per-cycle', revision, `a second grant for cycle ${e.data.cycle} (the first is r${first})`)
        else if (lastCycle !== null && e.data.cycle < lastCycle) v('grant-once-per-cycle', revision, `cycle ${e.data.cycle} granted after cycle ${lastCycle}`)
        else cycles.set(e.data.cycle, revision)
        if (lastCycle === null || e.data.cycle > lastCycle) lastCycle = e.data.cycle
        if (plan !== null && e.data.plan !== plan) v('grant-per-plan', revision, `grant for plan ${e.data.plan} while the account is on ${plan}`)
        if (e.data.granted !== MONTHLY_CREDITS[e.data.plan]) v('grant-per-plan', revision, `granted ${e.data.granted}; plan ${e.data.plan} grants ${MONTHLY_CREDITS[e.data.plan]} a month`)
        if (e.data.expired !== before) v('grant-per-plan', revision, `expired ${e.data.expired}, the balance before the new cycle was ${before}`)
        break
      }
      case 'CreditPlanChanged':
        if (plan !== null && e.data.from !== plan) v('plan-change', revision, `change from ${e.data.from} while the account is on ${plan}`)
        if (e.data.adjustment !== MONTHLY_CREDITS[e.data.to] - MONTHLY_CREDITS[e.data.from]) v('plan-change', revision, `adjustment ${e.data.adjustment}, the plans differ by ${MONTHLY_CREDITS[e.data.to] - MONTHLY_CREDITS[e.data.from]}`)
        plan = e.data.to
        break
      case 'CreditsCharged': {
        charge(e.data.chargeId, e.data.cost, 'charge id')
        if (e.data.pending) pending.set(e.data.chargeId, { revision, at: e.data.at })
        const wrong = priceMismatch(e.data.operation, e.data.cost, e.data.at)
        if (wrong) v('price', revision, wrong)
        break
      }
      case 'CreditsReserved': {
        const seen = holds.get(e.data.reservationId)
        if (seen) v('unique-id', revision, `reservation id ${e.data.reservationId} was already used at r${seen.revision}`)
        else holds.set(e.data.reservationId, { revision, held: e.data.amount, taken: 0, closed: null })
        break
      }
      case 'CreditsHoldExtended': {
        const h = holds.get(e.data.reservationId)
        if (!h || h.closed) v('unknown-reservation', revision, `extends reservation ${e.data.reservationId}, which is ${h ? h.closed : 'unknown'}`)
        else h.held += e.data.by
        break
      }
      case 'CreditsCaptured': {
        const h = holds.get(e.data.reservationId)
        const id = capturedChargeId(e.data.reservationId, e.data.part)
        if (!h) v('unknown-reservation', revision, `captures reservation ${e.data.reservationId}, which was never made`)
        else if (h.closed) {
          v('unique-id', revision, `captures reservation ${e.data.reservationId}, already ${h.closed}`)
          break
        } else {
          h.taken += e.data.reserved
          if (h.taken > h.held) v('capture-exceeds-reservation', revision, `captures take ${h.taken} out of reservation ${e.data.reservationId}, which held ${h.held}`)
          if (!e.data.part || h.taken >= h.held) h.closed = 'captured'
        }
        charge(id, e.data.cost, 'capture id')
        if (e.data.pending) pending.set(id, { revision, at: e.data.at })
        const wrong = priceMismatch(e.data.operation, e.data.cost, e.data.at)
        if (wrong) v('price', revision, wrong)
        const decoded = e.data.noteId !== null && e.data.operation === PRICES.import.operation ? opts.decodedSeconds?.get(e.data.noteId) : undefined
        const lying = decoded !== undefined ? decodedPriceMismatch(e.data.cost, e.data.noteId!, decoded) : null
        if (lying) v('price', revision, lying)
        break
      }
      case 'CreditsReleased': {
        const h = holds.get(e.data.reservationId)
        if (!h) v('unknown-reservation', revision, `releases reservation ${e.data.reservationId}, which was never made`)
        else if (h.closed) v('unique-id', revision, `releases reservation ${e.data.reservationId}, already ${h.closed}`)
        else {
          if (h.taken + e.data.amount > h.held) v('capture-exceeds-reservation', revision, `releases ${e.data.amount} of reservation ${e.data.reservationId}, which has ${h.held - h.taken} left`)
          h.closed = 'released'
        }
        break
      }
      case 'CreditsRefunded': {
        const firstUse = refundIds.get(e.data.refundId)
        if (firstUse !== undefined) v('unique-id', revision, `refund id ${e.data.refundId} was already used at r${firstUse}`)
        else refundIds.set(e.data.refundId, revision)
        const c = charges.get(e.data.chargeId)
        if (!c) {
          v('refund-unknown-charge', revision, `refunds ${e.data.amount} for charge ${e.data.chargeId}, which this account never made`)
          break
        }
        pending.delete(e.data.chargeId)
        c.refunds++
        c.refunded += e.data.amount
        if (c.refunds > 1) v('refund-twice', revision, `refund #${c.refunds} of charge ${e.data.chargeId} (r${c.revision})`)
        else if (c.refunded > c.cost) v('refund-exceeds-charge', revision, `refunds ${c.refunded} in total for charge ${e.data.chargeId} of ${c.cost}`)
        break
      }
    }
    if (e.type === 'CreditsChargeCompleted') pending.delete(e.data.chargeId)
    state = evolveLedger(state, e)
  }

  if (opts.holds) {
    for (const h of orphanHolds(state.reservations, opts.holds.now, opts.holds.leaseMs, opts.holds.noteExists)) {
      v('hold-lease', holds.get(h.reservationId)?.revision ?? -1, orphanReason(h, opts.holds.leaseMs))
    }
  }
  if (opts.holds) {
    const cutoff = Date.parse(opts.holds.now) - opts.holds.leaseMs
    for (const [chargeId, p] of pending) {
      if (Date.parse(p.at) <= cutoff) v('hold-lease', p.revision, `pending charge ${chargeId} neither completed nor refunded within the lease (${Math.round(opts.holds.leaseMs / 1000)} s)`)
    }
  }
  const chain = verifyChain(events)
  for (const b of chain.breaks) v('hash-chain', b.revision, b.message)
  for (const b of checkAnchors(events, opts.anchors ?? [])) v('hash-chain', b.revision, b.message)
  out.sort((a, b) => a.revision - b.revision)
  return { violations: out, chain }
}
