// The credit ledger of one account, stream `credits-<accountId>`. Every change of the balance
// is an event that carries the balance after it, so an auditor can recompute each line from
// the amounts alone and compare.
//
// Rules:
// - A cycle is a calendar month (UTC). The first command of a new month starts a cycle: the
//   balance is reset to the plan's credits (unused credits expire, nothing carries over).
// - The balance never goes negative: a charge, reservation or capture that does not fit is
//   refused with `insufficient_credits` (balance, required).
// - A reservation holds credits for an operation whose final cost is known later; capture
//   turns it into a charge of the final amount (which may exceed the hold if the balance
//   covers the difference), release gives the hold back.
// - A multi-part operation (several templates) holds its whole price in one reservation, so
//   concurrent requests cannot each take a share and starve one another: each part that
//   succeeds is captured out of the hold (`part`, refundable on its own), and releasing the
//   reservation gives back what no part used. A hold can be extended once the real price is
//   known (an import's duration), refused when the balance does not cover it.
// - A refund reverses one charge (or one captured reservation) exactly once, into the current
//   balance.
// - Commands carrying an id that was already used (charge, reservation, refund) are accepted
//   and change nothing, so a retried request never charges twice.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { MONTHLY_CREDITS, cycleOf, type CycleId, type Plan } from './plans.ts'
import { deleteIn, emptyShardedMap, getIn, hasIn, setIn, type ShardedMap } from '../shardedMap.ts'
import { streamKind } from '../streams.ts'
import { chainEvents, type ChainLinks } from './chain.ts'

export const creditsStream = streamKind('credits')

// ---- events ---------------------------------------------------------------------------------

// `prevHash`/`hash`: the tamper-evident chain (chain.ts); absent on events written before it.
type At = { at: string } & ChainLinks
export type CreditAccountOpened = DomainEvent<'CreditAccountOpened', { accountId: string; plan: Plan } & At>
export type CreditCycleStarted = DomainEvent<
  'CreditCycleStarted',
  { cycle: CycleId; plan: Plan; granted: number; expired: number; balanceAfter: number } & At
>
export type CreditPlanChanged = DomainEvent<'CreditPlanChanged', { from: Plan; to: Plan; adjustment: number; balanceAfter: number } & At>
export type CreditsCharged = DomainEvent<
  'CreditsCharged',
  {
    chargeId: string
    operation: string
    cost: number
    noteId: string | null
    requestId: string | null
    /** The operation runs after the charge: it ends by CreditsChargeCompleted or CreditsChargeFailed, else it expires (refunds.ts). */
    pending?: true
    balanceAfter: number
  } & At
>
export type CreditsChargeCompleted = DomainEvent<'CreditsChargeCompleted', { chargeId: string } & At>
/** The operation paid by a pending charge failed: the refund process manager refunds it (refunds.ts). */
export type CreditsChargeFailed = DomainEvent<'CreditsChargeFailed', { chargeId: string; operation: string; noteId: string | null; reason: string } & At>
export type CreditsReserved = DomainEvent<
  'CreditsReserved',
  { reservationId: string; operation: string; amount: number; noteId: string | null; requestId: string | null; balanceAfter: number } & At
>
export type CreditsCaptured = DomainEvent<
  'CreditsCaptured',
  {
    reservationId: string
    operation: string
    /** What the capture took out of the hold. */
    reserved: number
    cost: number
    noteId: string | null
    /** The part of a multi-part operation this captures (absent: the whole reservation). */
    part?: string | null
    /** As a pending charge: what it paid for is recorded after it (CreditsChargeCompleted), else it is refunded (refunds.ts). */
    pending?: true
    balanceAfter: number
  } & At
>
export type CreditsHoldExtended = DomainEvent<
  'CreditsHoldExtended',
  { reservationId: string; operation: string; by: number; amount: number; noteId: string | null; reason: string; balanceAfter: number } & At
>
export type CreditsReleased = DomainEvent<
  'CreditsReleased',
  { reservationId: string; operation: string; amount: number; noteId: string | null; reason: string; balanceAfter: number } & At
>
export type CreditsRefunded = DomainEvent<
  'CreditsRefunded',
  { refundId: string; chargeId: string; operation: string; amount: number; noteId: string | null; reason: string; balanceAfter: number } & At
>

export type CreditEvent =
  | CreditAccountOpened
  | CreditCycleStarted
  | CreditPlanChanged
  | CreditsCharged
  | CreditsReserved
  | CreditsCaptured
  | CreditsHoldExtended
  | CreditsReleased
  | CreditsRefunded
  | CreditsChargeCompleted
  | CreditsChargeFailed

/** The charge id of a captured reservation (or of one captured part of it): what a refund names. */
export const capturedChargeId = (reservationId: string, part?: string | null): string => (part ? `${reservationId}#${part}` : reservationId)

/** The charge or reservation a ledger entry belongs to (the statement's and the double entry's reference column). */
export function entryReference(e: CreditEvent): string | null {
  switch (e.type) {
    case 'CreditsCharged':
      return e.data.chargeId
    case 'CreditsReserved':
    case 'CreditsHoldExtended':
    case 'CreditsReleased':
      return e.data.reservationId
    case 'CreditsCaptured':
      return capturedChargeId(e.data.reservationId, e.data.part)
    case 'CreditsRefunded':
      return e.data.chargeId
    default:
      return null
  }
}

export const CREDIT_EVENT_TYPES: readonly CreditEvent['type'][] = [
  'CreditAccountOpened',
  'CreditCycleStarted',
  'CreditPlanChanged',
  'CreditsCharged',
  'CreditsReserved',
  'CreditsCaptured',
  'CreditsHoldExtended',
  'CreditsReleased',
  'CreditsRefunded',
  'CreditsChargeCompleted',
  'CreditsChargeFailed',
]

/** Events that record how a pending charge ended and move no credits: no line in a statement. */
export const isBookkeeping = (e: CreditEvent): boolean => e.type === 'CreditAccountOpened' || e.type === 'CreditsChargeCompleted' || e.type === 'CreditsChargeFailed'

/** The signed change of the spendable balance that an event makes (what the auditor sums). */
export function balanceDelta(e: CreditEvent, balanceBefore: number): number {
  switch (e.type) {
    case 'CreditAccountOpened':
      return 0
    case 'CreditCycleStarted':
      return e.data.granted - e.data.expired
    case 'CreditPlanChanged':
      return Math.max(-balanceBefore, e.data.adjustment)
    case 'CreditsCharged':
      return -e.data.cost
    case 'CreditsReserved':
      return -e.data.amount
    case 'CreditsCaptured':
      return e.data.reserved - e.data.cost
    case 'CreditsHoldExtended':
      return -e.data.by
    case 'CreditsReleased':
      return e.data.amount
    case 'CreditsRefunded':
      return e.data.amount
    case 'CreditsChargeCompleted':
    case 'CreditsChargeFailed':
      return 0
  }
}

// ---- commands -------------------------------------------------------------------------------

type Now = { now: string }
export type CreditCommand =
  | ({ type: 'OpenCreditAccount'; accountId: string; plan: Plan } & Now)
  | ({ type: 'ChangePlan'; plan: Plan } & Now)
  | ({ type: 'ChargeCredits'; chargeId: string; operation: string; cost: number; noteId?: string | null; requestId?: string | null; pending?: boolean } & Now)
  | ({ type: 'CompleteCharge'; chargeId: string } & Now)
  | ({ type: 'FailCharge'; chargeId: string; reason: string } & Now)
  | ({ type: 'ReserveCredits'; reservationId: string; operation: string; amount: number; noteId?: string | null; requestId?: string | null } & Now)
  | ({ type: 'CaptureReservation'; reservationId: string; cost: number; part?: string | null; pending?: boolean } & Now)
  | ({ type: 'ExtendReservation'; reservationId: string; amount: number; reason: string } & Now)
  | ({ type: 'ReleaseReservation'; reservationId: string; reason: string } & Now)
  | ({ type: 'RefundCharge'; refundId: string; chargeId: string; reason: string } & Now)

// ---- state ----------------------------------------------------------------------------------

interface Spend {
  operation: string
  amount: number
  noteId: string | null
}
export interface LedgerState {
  opened: boolean
  plan: Plan
  cycle: CycleId | null
  balance: number
  /** Open holds by reservation id (amount: what is still held), with when they were made. */
  reservations: Readonly<Record<string, Spend & { at: string; requestId: string | null }>>
  /** Reservation ids already captured or released: they cannot be used again. */
  closedReservations: ShardedMap<'captured' | 'released'>
  /** Charges (and captured reservations) that can still be refunded, by charge id. */
  refundable: ShardedMap<Spend>
  /** Every charge id ever used, refunded or not, and every refund id. */
  seenCharges: ShardedMap<true>
  seenRefunds: ShardedMap<true>
  /** Pending charges (their operation still running), with when they were made and why they failed, if they did. */
  openCharges: Readonly<Record<string, { at: string; operation: string; noteId: string | null; failed: string | null }>>
  /** Hash of the stream's last hashed event: the next event's prevHash. */
  head: string | null
}

export const initialLedgerState = (): LedgerState => ({
  opened: false,
  plan: 'free',
  cycle: null,
  balance: 0,
  reservations: {},
  closedReservations: emptyShardedMap(),
  refundable: emptyShardedMap(),
  seenCharges: emptyShardedMap(),
  seenRefunds: emptyShardedMap(),
  openCharges: {},
  head: null,
})

const without = <V>(rec: Readonly<Record<string, V>>, key: string): Record<string, V> => {
  const { [key]: _, ...rest } = rec
  return rest
}

export function evolveLedger(s: LedgerState, e: CreditEvent): LedgerState {
  const next = evolveBalances(s, e)
  return typeof e.data.hash === 'string' ? { ...next, head: e.data.hash } : next
}

function evolveBalances(s: LedgerState, e: CreditEvent): LedgerState {
  switch (e.type) {
    case 'CreditAccountOpened':
      return { ...s, opened: true, plan: e.data.plan }
    case 'CreditCycleStarted':
      return { ...s, cycle: e.data.cycle, plan: e.data.plan, balance: e.data.balanceAfter }
    case 'CreditPlanChanged':
      return { ...s, plan: e.data.to, balance: e.data.balanceAfter }
    case 'CreditsCharged':
      return {
        ...s,
        openCharges: e.data.pending ? { ...s.openCharges, [e.data.chargeId]: { at: e.data.at, operation: e.data.operation, noteId: e.data.noteId, failed: null } } : s.openCharges,
        balance: e.data.balanceAfter,
        refundable: setIn(s.refundable, e.data.chargeId, { operation: e.data.operation, amount: e.data.cost, noteId: e.data.noteId }),
        seenCharges: setIn(s.seenCharges, e.data.chargeId, true),
      }
    case 'CreditsReserved':
      return {
        ...s,
        balance: e.data.balanceAfter,
        reservations: {
          ...s.reservations,
          [e.data.reservationId]: { operation: e.data.operation, amount: e.data.amount, noteId: e.data.noteId, at: e.data.at, requestId: e.data.requestId },
        },
      }
    case 'CreditsHoldExtended': {
      const hold = s.reservations[e.data.reservationId]
      if (!hold) return { ...s, balance: e.data.balanceAfter }
      return { ...s, balance: e.data.balanceAfter, reservations: { ...s.reservations, [e.data.reservationId]: { ...hold, amount: e.data.amount } } }
    }
    case 'CreditsCaptured': {
      const hold = s.reservations[e.data.reservationId]
      const chargeId = capturedChargeId(e.data.reservationId, e.data.part)
      const spend = { operation: e.data.operation, amount: e.data.cost, noteId: e.data.noteId }
      if (e.data.pending) s = { ...s, openCharges: { ...s.openCharges, [chargeId]: { at: e.data.at, operation: e.data.operation, noteId: e.data.noteId, failed: null } } }
      if (e.data.part && hold && hold.amount > e.data.reserved) {
        // A part: the rest of the hold stays for the other parts.
        return {
          ...s,
          balance: e.data.balanceAfter,
          reservations: { ...s.reservations, [e.data.reservationId]: { ...hold, amount: hold.amount - e.data.reserved } },
          refundable: setIn(s.refundable, chargeId, spend),
          seenCharges: setIn(s.seenCharges, chargeId, true),
        }
      }
      return {
        ...s,
        balance: e.data.balanceAfter,
        reservations: without(s.reservations, e.data.reservationId),
        closedReservations: setIn(s.closedReservations, e.data.reservationId, 'captured'),
        refundable: setIn(s.refundable, chargeId, spend),
        seenCharges: setIn(s.seenCharges, chargeId, true),
      }
    }
    case 'CreditsReleased':
      return {
        ...s,
        balance: e.data.balanceAfter,
        reservations: without(s.reservations, e.data.reservationId),
        closedReservations: setIn(s.closedReservations, e.data.reservationId, 'released'),
      }
    case 'CreditsChargeCompleted':
      return { ...s, openCharges: without(s.openCharges, e.data.chargeId) }
    case 'CreditsChargeFailed': {
      const open = s.openCharges[e.data.chargeId]
      return open ? { ...s, openCharges: { ...s.openCharges, [e.data.chargeId]: { ...open, failed: e.data.reason } } } : s
    }
    case 'CreditsRefunded':
      return {
        ...s,
        openCharges: without(s.openCharges, e.data.chargeId),
        balance: e.data.balanceAfter,
        refundable: deleteIn(s.refundable, e.data.chargeId),
        seenRefunds: setIn(s.seenRefunds, e.data.refundId, true),
      }
  }
}

// ---- decide ---------------------------------------------------------------------------------

const insufficient = (balance: number, required: number) =>
  new DomainError('insufficient_credits', `This operation needs ${required} credits and ${balance} are left in this cycle.`, {
    balance,
    required,
  })

const assertAmount = (n: number, what: string) => {
  if (!Number.isSafeInteger(n) || n < 0) throw new DomainError('invalid_request', `${what} must be a non-negative integer, got ${n}`)
}

export function decideLedger(c: CreditCommand, s: LedgerState): CreditEvent[] {
  if (c.type === 'OpenCreditAccount') {
    if (s.opened) return []
    const cycle = cycleOf(c.now)
    const granted = MONTHLY_CREDITS[c.plan]
    return [
      { type: 'CreditAccountOpened', data: { accountId: c.accountId, plan: c.plan, at: c.now } },
      { type: 'CreditCycleStarted', data: { cycle, plan: c.plan, granted, expired: 0, balanceAfter: granted, at: c.now } },
    ]
  }
  if (!s.opened) throw new DomainError('not_found', 'This account has no credit ledger.')

  // A command in a later month first closes the old cycle and grants the new one.
  const events: CreditEvent[] = []
  const cycle = cycleOf(c.now)
  let state = s
  if (s.cycle === null || cycle > s.cycle) {
    const granted = MONTHLY_CREDITS[s.plan]
    const started: CreditCycleStarted = {
      type: 'CreditCycleStarted',
      data: { cycle, plan: s.plan, granted, expired: s.balance, balanceAfter: granted, at: c.now },
    }
    events.push(started)
    state = evolveLedger(state, started)
  }
  // The rollover is kept even when the command itself turns out to be a no-op retry: the new
  // month has begun regardless.
  return [...events, ...decideInCycle(c, state)]
}

function decideInCycle(c: Exclude<CreditCommand, { type: 'OpenCreditAccount' }>, s: LedgerState): CreditEvent[] {
  const at = c.now
  switch (c.type) {
    case 'ChangePlan': {
      if (c.plan === s.plan) return []
      const adjustment = MONTHLY_CREDITS[c.plan] - MONTHLY_CREDITS[s.plan]
      const balanceAfter = Math.max(0, s.balance + adjustment)
      return [{ type: 'CreditPlanChanged', data: { from: s.plan, to: c.plan, adjustment, balanceAfter, at } }]
    }
    case 'ChargeCredits': {
      assertAmount(c.cost, 'cost')
      if (hasIn(s.seenCharges, c.chargeId)) return []
      if (c.cost > s.balance) throw insufficient(s.balance, c.cost)
      return [
        {
          type: 'CreditsCharged',
          data: {
            chargeId: c.chargeId,
            operation: c.operation,
            cost: c.cost,
            noteId: c.noteId ?? null,
            requestId: c.requestId ?? null,
            ...(c.pending ? { pending: true as const } : {}),
            balanceAfter: s.balance - c.cost,
            at,
          },
        },
      ]
    }
    case 'ReserveCredits': {
      assertAmount(c.amount, 'amount')
      if (s.reservations[c.reservationId] || hasIn(s.closedReservations, c.reservationId)) return []
      if (c.amount > s.balance) throw insufficient(s.balance, c.amount)
      return [
        {
          type: 'CreditsReserved',
          data: {
            reservationId: c.reservationId,
            operation: c.operation,
            amount: c.amount,
            noteId: c.noteId ?? null,
            requestId: c.requestId ?? null,
            balanceAfter: s.balance - c.amount,
            at,
          },
        },
      ]
    }
    case 'CaptureReservation': {
      assertAmount(c.cost, 'cost')
      const closed = getIn(s.closedReservations, c.reservationId)
      if (c.part) {
        if (hasIn(s.seenCharges, capturedChargeId(c.reservationId, c.part))) return []
        const hold = s.reservations[c.reservationId]
        if (!hold) throw new DomainError('conflict', `Reservation ${c.reservationId} is ${closed ?? 'unknown'} and cannot be captured.`)
        if (c.cost > hold.amount) throw new DomainError('conflict', `Part ${c.part} costs ${c.cost} and reservation ${c.reservationId} holds only ${hold.amount}.`)
        return [
          {
            type: 'CreditsCaptured',
            data: { reservationId: c.reservationId, operation: hold.operation, reserved: c.cost, cost: c.cost, noteId: hold.noteId, part: c.part, ...(c.pending ? { pending: true as const } : {}), balanceAfter: s.balance, at },
          },
        ]
      }
      if (closed === 'captured') return []
      const hold = s.reservations[c.reservationId]
      if (!hold) throw new DomainError('conflict', `Reservation ${c.reservationId} is ${closed ?? 'unknown'} and cannot be captured.`)
      const extra = c.cost - hold.amount
      if (extra > s.balance) throw insufficient(s.balance + hold.amount, c.cost)
      return [
        {
          type: 'CreditsCaptured',
          data: {
            reservationId: c.reservationId,
            operation: hold.operation,
            reserved: hold.amount,
            cost: c.cost,
            noteId: hold.noteId,
            ...(c.pending ? { pending: true as const } : {}),
            balanceAfter: s.balance - extra,
            at,
          },
        },
      ]
    }
    case 'ExtendReservation': {
      assertAmount(c.amount, 'amount')
      const hold = s.reservations[c.reservationId]
      if (!hold) {
        const closed = getIn(s.closedReservations, c.reservationId)
        throw new DomainError('conflict', `Reservation ${c.reservationId} is ${closed ?? 'unknown'} and cannot be extended.`)
      }
      const by = c.amount - hold.amount
      if (by <= 0) return []
      if (by > s.balance) throw insufficient(s.balance + hold.amount, c.amount)
      return [
        {
          type: 'CreditsHoldExtended',
          data: { reservationId: c.reservationId, operation: hold.operation, by, amount: c.amount, noteId: hold.noteId, reason: c.reason, balanceAfter: s.balance - by, at },
        },
      ]
    }
    case 'ReleaseReservation': {
      const hold = s.reservations[c.reservationId]
      if (!hold) {
        if (getIn(s.closedReservations, c.reservationId) === 'released') return []
        throw new DomainError('conflict', `Reservation ${c.reservationId} is ${getIn(s.closedReservations, c.reservationId) ?? 'unknown'} and cannot be released.`)
      }
      return [
        {
          type: 'CreditsReleased',
          data: {
            reservationId: c.reservationId,
            operation: hold.operation,
            amount: hold.amount,
            noteId: hold.noteId,
            reason: c.reason,
            balanceAfter: s.balance + hold.amount,
            at,
          },
        },
      ]
    }
    case 'CompleteCharge':
      // Already completed, failed or refunded (e.g. expired meanwhile): nothing to record.
      return s.openCharges[c.chargeId] && !s.openCharges[c.chargeId]!.failed ? [{ type: 'CreditsChargeCompleted', data: { chargeId: c.chargeId, at } }] : []
    case 'FailCharge': {
      const open = s.openCharges[c.chargeId]
      if (!open || open.failed) return []
      return [{ type: 'CreditsChargeFailed', data: { chargeId: c.chargeId, operation: open.operation, noteId: open.noteId, reason: c.reason, at } }]
    }
    case 'RefundCharge': {
      if (hasIn(s.seenRefunds, c.refundId)) return []
      const charge = getIn(s.refundable, c.chargeId)
      if (!charge) {
        const why = hasIn(s.seenCharges, c.chargeId) ? 'was already refunded' : 'does not exist'
        throw new DomainError('conflict', `Charge ${c.chargeId} ${why}.`)
      }
      return [
        {
          type: 'CreditsRefunded',
          data: {
            refundId: c.refundId,
            chargeId: c.chargeId,
            operation: charge.operation,
            amount: charge.amount,
            noteId: charge.noteId,
            reason: c.reason,
            balanceAfter: s.balance + charge.amount,
            at,
          },
        },
      ]
    }
  }
}

export const ledgerDecider: Decider<CreditCommand, CreditEvent, LedgerState> = {
  // Every event decided is linked onto the stream's hash chain.
  decide: (c, s) => chainEvents(decideLedger(c, s), s.head),
  evolve: evolveLedger,
  initialState: initialLedgerState,
}
