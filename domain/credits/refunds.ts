// The refund process manager's decision, as a pure function. A pending charge (the operation runs
// after it) ends in one of three ways, each an event on the ledger stream: CreditsChargeCompleted
// (kept), CreditsChargeFailed (the failure, recorded by whoever saw it), or nothing at all (the
// process died). The manager refunds every failed charge, and every pending charge older than the
// lease: an operation never outlives its request, so past the lease it will never complete. The
// refund id is derived from the charge id and the ledger refunds a charge at most once, so
// however many managers run, and wherever one dies, a charge ends with exactly one refund.
import type { LedgerState } from './ledger.ts'

export interface RefundDue {
  chargeId: string
  operation: string
  reason: string
}

export function refundsDue(s: LedgerState, now: string, leaseMs: number): RefundDue[] {
  const cutoff = Date.parse(now) - leaseMs
  return Object.entries(s.openCharges).flatMap(([chargeId, c]) => {
    if (c.failed) return [{ chargeId, operation: c.operation, reason: `${c.operation} failed: ${c.failed}`.slice(0, 500) }]
    if (Date.parse(c.at) <= cutoff) return [{ chargeId, operation: c.operation, reason: `${c.operation} never completed within the lease (${Math.round(leaseMs / 1000)} s)` }]
    return []
  })
}
