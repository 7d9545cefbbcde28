// The auditor's check, as a pure function: rebuild an account's statement from its ledger
// events alone (amounts, not the balances the events claim) and compare it line by line with
// the events' own balances and with the read model.
import { balanceDelta, evolveLedger, initialLedgerState, type CreditEvent, type LedgerState } from './ledger.ts'
import { orphanHolds, orphanReason, type OrphanHold } from './holds.ts'

export interface StatementLine {
  revision: number
  eventId: string
  type: CreditEvent['type']
  operation: string | null
  noteId: string | null
  delta: number
  balance: number
  at: string
}

export interface ReadModelLine {
  _id: string
  revision: number
  delta: number
  balanceAfter: number
}

export interface AuditResult {
  statement: StatementLine[]
  balance: number
  problems: string[]
  /** Holds older than the lease whose owner never appeared (each is also a problem). */
  orphanHolds: OrphanHold[]
  ok: boolean
}

/** What the auditor needs to tell an orphaned hold: the time, the lease, which owner notes exist. */
export interface HoldCheck {
  now: string
  leaseMs: number
  noteExists: (noteId: string) => boolean
}

/** The open holds after replaying `events` (to look their owners up before auditing). */
export function openHolds(events: { event: CreditEvent }[]): LedgerState['reservations'] {
  return events.reduce((s, { event }) => evolveLedger(s, event), initialLedgerState()).reservations
}

export function auditLedger(
  events: { id: string; revision: number; event: CreditEvent }[],
  readModel: { lines: ReadModelLine[]; balance: number | null },
  holds?: HoldCheck,
): AuditResult {
  const problems: string[] = []
  const statement: StatementLine[] = []
  let balance = 0
  let state = initialLedgerState()
  for (const { id, revision, event } of events) {
    const delta = balanceDelta(event, balance)
    balance += delta
    state = evolveLedger(state, event)
    if ('balanceAfter' in event.data && event.data.balanceAfter !== balance) {
      problems.push(`event r${revision} (${event.type}) claims balance ${event.data.balanceAfter}, the amounts give ${balance}`)
    }
    if (balance < 0) problems.push(`balance negative (${balance}) after r${revision}`)
    if (event.type === 'CreditAccountOpened') continue
    statement.push({
      revision,
      eventId: id,
      type: event.type,
      operation: 'operation' in event.data ? event.data.operation : null,
      noteId: 'noteId' in event.data ? event.data.noteId : null,
      delta,
      balance,
      at: event.data.at,
    })
  }
  if (state.balance !== balance) problems.push(`folded state balance ${state.balance} differs from the statement's ${balance}`)
  const orphans = holds ? orphanHolds(state.reservations, holds.now, holds.leaseMs, holds.noteExists) : []
  for (const h of orphans) problems.push(orphanReason(h, holds!.leaseMs))

  const byId = new Map(readModel.lines.map((l) => [l._id, l]))
  for (const line of statement) {
    const rm = byId.get(line.eventId)
    if (!rm) {
      problems.push(`read model misses the line for r${line.revision} (${line.type})`)
      continue
    }
    byId.delete(line.eventId)
    if (rm.delta !== line.delta || rm.balanceAfter !== line.balance || rm.revision !== line.revision) {
      problems.push(
        `read model line r${line.revision} says delta ${rm.delta}, balance ${rm.balanceAfter}; the events say delta ${line.delta}, balance ${line.balance}`,
      )
    }
  }
  for (const extra of byId.values()) problems.push(`read model has a line (${extra._id}, r${extra.revision}) that no event backs`)
  if (readModel.balance !== balance) problems.push(`read model balance ${readModel.balance ?? 'missing'} differs from the replayed ${balance}`)
  return { statement, balance, problems, orphanHolds: orphans, ok: problems.length === 0 }
}
