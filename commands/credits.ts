// Credit commands: thin wrappers that put the ledger decider behind the command handler.
import { randomUUID } from 'node:crypto'
import { derivedEventId } from './handleCommand.ts'
import { creditsStream, ledgerDecider, type CreditCommand, type CreditEvent, type LedgerState } from '../domain/credits/ledger.ts'
import type { Plan } from '../domain/credits/plans.ts'
import type { CommandHandler, HandleResult } from './handleCommand.ts'

type Clock = () => Date
type Without<C, K extends string> = C extends unknown ? Omit<C, K> : never

export class CreditCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly clock: Clock = () => new Date(),
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
  charge(accountId: string, c: { operation: string; cost: number; noteId?: string | null; requestId?: string; chargeId?: string }) {
    // From the request when there is one: a retried request names the same charge, which the ledger applies once.
    const chargeId = c.chargeId ?? (c.requestId ? derivedEventId('charge', c.requestId, { operation: c.operation, cost: c.cost, noteId: c.noteId ?? null }, 0) : randomUUID())
    return this.run(accountId, { type: 'ChargeCredits', chargeId, operation: c.operation, cost: c.cost, noteId: c.noteId ?? null, requestId: c.requestId ?? null }, c.requestId).then(
      (r) => ({ ...r, chargeId }),
    )
  }

  reserve(accountId: string, c: { operation: string; amount: number; noteId?: string | null; requestId?: string; reservationId?: string }) {
    const reservationId = c.reservationId ?? (c.requestId ? derivedEventId('reserve', c.requestId, { operation: c.operation, amount: c.amount, noteId: c.noteId ?? null }, 0) : randomUUID())
    return this.run(accountId, { type: 'ReserveCredits', reservationId, operation: c.operation, amount: c.amount, noteId: c.noteId ?? null, requestId: c.requestId ?? null }, c.requestId).then(
      (r) => ({ ...r, reservationId }),
    )
  }

  /** Captures the reservation at `cost`; with `part`, captures that part out of the hold and leaves the rest held. */
  capture(accountId: string, reservationId: string, cost: number, part?: string) {
    return this.run(accountId, { type: 'CaptureReservation', reservationId, cost, part: part ?? null })
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
   * Runs `operation` after charging for it; when the operation fails the charge is refunded by
   * an event before the error is passed on, so a failure never costs credits.
   */
  async chargedOperation<T>(accountId: string, c: { operation: string; cost: number; noteId?: string | null; requestId?: string }, operation: () => Promise<T>): Promise<T> {
    const { chargeId } = await this.charge(accountId, c)
    try {
      return await operation()
    } catch (err) {
      await this.refund(accountId, chargeId, `${c.operation} failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500))
      throw err
    }
  }

  state(accountId: string) {
    return this.handler.load(creditsStream.of(accountId), ledgerDecider)
  }
}
