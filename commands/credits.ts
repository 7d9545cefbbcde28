// Credit commands: thin wrappers that put the ledger decider behind the command handler.
import { randomUUID } from 'node:crypto'
import { derivedEventId } from './handleCommand.ts'
import { creditsStream, ledgerDecider, type CreditCommand, type CreditEvent, type LedgerState } from '../domain/credits/ledger.ts'
import type { Plan } from '../domain/credits/plans.ts'
import type { CommandHandler, HandleResult } from './handleCommand.ts'
import { refundsDue } from '../domain/credits/refunds.ts'
import { uuidFromName } from '../domain/ids.ts'
import { isDomainError } from '../domain/errors.ts'

type Clock = () => Date
type Without<C, K extends string> = C extends unknown ? Omit<C, K> : never

export class CreditCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly clock: Clock = () => new Date(),
    private readonly opts: {
      /** A pending charge older than this never completed: it is refunded (CREDIT_HOLD_LEASE_SECONDS). */
      leaseMs?: number
      /** Crash tests only: dies like `kill -9` at the named point. */
      fault?: (point: string) => void
    } = {},
  ) {}

  private run(accountId: string, command: Without<CreditCommand, 'now'>, requestId?: string): Promise<HandleResult<CreditEvent, LedgerState>> {
    const full = { ...command, now: this.clock().toISOString() } as CreditCommand
    return this.handler.handle(creditsStream.of(accountId), full, ledgerDecider, requestId ? { metadata: { requestId } } : {})
  }

  open(accountId: string, plan: Plan) {
    return this.run(accountId, { type: 'OpenCreditAccount', accountId, plan })
  }

  changePlan(accountId: string, plan: Plan) {
    return this.run(accountId, { type: 'ChangePlan', plan })
  }

  /** Charges `cost` credits; throws DomainError insufficient_credits when they are not there. */
  charge(accountId: string, c: { operation: string; cost: number; noteId?: string | null; requestId?: string; chargeId?: string; pending?: boolean }) {
    // From the request when there is one: a retried request names the same charge, which the ledger applies once.
    const chargeId = c.chargeId ?? (c.requestId ? chargeIdOf(c.requestId, c) : randomUUID())
    const command = { type: 'ChargeCredits' as const, chargeId, operation: c.operation, cost: c.cost, noteId: c.noteId ?? null, requestId: c.requestId ?? null, ...(c.pending ? { pending: true } : {}) }
    return this.run(accountId, command, c.requestId).then(
      (r) => ({ ...r, chargeId }),
    )
  }

  reserve(accountId: string, c: { operation: string; amount: number; noteId?: string | null; requestId?: string; reservationId?: string }) {
    const reservationId = c.reservationId ?? (c.requestId ? derivedEventId('reserve', c.requestId, { operation: c.operation, amount: c.amount, noteId: c.noteId ?? null }, 0) : randomUUID())
    return this.run(accountId, { type: 'ReserveCredits', reservationId, operation: c.operation, amount: c.amount, noteId: c.noteId ?? null, requestId: c.requestId ?? null }, c.requestId).then(
      (r) => ({ ...r, reservationId }),
    )
  }

  /**
   * Captures the reservation at `cost`; with `part`, captures that part out of the hold and leaves
   * the rest held. `pending`: the capture pays for something recorded after it, settled by
   * `settlePending` like a pending charge.
   */
  capture(accountId: string, reservationId: string, cost: number, part?: string, opts: { pending?: boolean } = {}) {
    return this.run(accountId, { type: 'CaptureReservation', reservationId, cost, part: part ?? null, ...(opts.pending ? { pending: true } : {}) })
  }

  /** Raises the hold to `amount` in total (insufficient_credits when the balance does not cover the difference). */
  extend(accountId: string, reservationId: string, amount: number, reason: string) {
    return this.run(accountId, { type: 'ExtendReservation', reservationId, amount, reason })
  }

  release(accountId: string, reservationId: string, reason: string) {
    return this.run(accountId, { type: 'ReleaseReservation', reservationId, reason })
  }

  refund(accountId: string, chargeId: string, reason: string, refundId: string = randomUUID()) {
    return this.run(accountId, { type: 'RefundCharge', refundId, chargeId, reason })
  }

  /**
   * Runs `operation` after a pending charge for it (the one way a single-price operation pays):
   * see `settlePending` for how it ends.
   */
  async chargedOperation<T>(accountId: string, c: { operation: string; cost: number; noteId?: string | null; requestId?: string }, operation: (chargeId: string) => Promise<T>): Promise<T> {
    const { chargeId } = await this.charge(accountId, { ...c, pending: true })
    return this.settlePending(accountId, [chargeId], () => operation(chargeId))
  }

  /**
   * Runs `operation`, what the pending charges `chargeIds` (pending charges or pending captures)
   * paid for. Success records CreditsChargeCompleted for each; a failure records
   * CreditsChargeFailed and nothing else: the refund is the process manager's (`settleCharges`,
   * run here at once, best effort, and by the credit-holds worker on every pass), decided from the
   * ledger's events, so a process dying anywhere between the charge and the refund still ends with
   * exactly one refund (the failure event, or the lease running out without completion). No
   * request refunds a failed operation any other way.
   */
  async settlePending<T>(accountId: string, chargeIds: readonly string[], operation: () => Promise<T>): Promise<T> {
    this.opts.fault?.('crash-after-charge')
    let result: T
    try {
      result = await operation()
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).slice(0, 400)
      for (const chargeId of chargeIds) await this.run(accountId, { type: 'FailCharge', chargeId, reason })
      this.opts.fault?.('crash-after-charge-failed')
      // Best effort: the worker's next pass settles it if this does not.
      await this.settleCharges(accountId).catch(() => {})
      this.opts.fault?.('crash-after-refund')
      throw err
    }
    for (const chargeId of chargeIds) await this.run(accountId, { type: 'CompleteCharge', chargeId })
    return result
  }

  /**
   * The refund process manager's step for one account: refunds every failed pending charge and
   * every pending charge past the lease (domain/credits/refunds.ts). Idempotent: the refund id is
   * derived from the charge and a charge is refunded at most once. Returns the refunds made.
   */
  async settleCharges(accountId: string): Promise<number> {
    const { state } = await this.state(accountId)
    let made = 0
    for (const due of refundsDue(state, this.clock().toISOString(), this.opts.leaseMs ?? 900_000)) {
      try {
        const r = await this.refund(accountId, due.chargeId, due.reason, uuidFromName('refund', due.chargeId))
        if (r.events.some((e) => e.type === 'CreditsRefunded')) made++
      } catch (err) {
        // Refunded meanwhile by another manager: nothing left to do.
        if (!(isDomainError(err) && err.code === 'conflict')) throw err
      }
    }
    return made
  }

  state(accountId: string) {
    return this.handler.load(creditsStream.of(accountId), ledgerDecider)
  }
}

/**
 * The charge a request makes, derived from its request id (the Idempotency-Key when the client
 * sent one) and what it charges for, so a retried request names the same charge. `about`: more of
 * the request that must match for it to be the same request (ask: the session and the question),
 * so another body under the same key is another charge, never a free ride on the first.
 */
export function chargeIdOf(requestId: string, c: { operation: string; cost: number; noteId?: string | null }, about?: Record<string, unknown>): string {
  return derivedEventId('charge', requestId, { operation: c.operation, cost: c.cost, noteId: c.noteId ?? null, ...(about ? { about } : {}) }, 0)
}
