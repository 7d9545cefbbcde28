// The auditor's check, as a pure function: rebuild an account's statement from its ledger
// events alone (amounts, not the balances the events claim), check the ledger's invariants and
// its hash chain (invariants.ts), and compare the statement line by line with the read model.
import { balanceDelta, creditsStream, evolveLedger, isBookkeeping, initialLedgerState, type CreditEvent, type LedgerState } from './ledger.ts'
import { orphanHolds, type OrphanHold } from './holds.ts'
import { checkLedgerInvariants, violationLine, type Violation } from './invariants.ts'
import type { Anchor, ChainReport } from './chain.ts'
import { doubleEntry, type DoubleEntryStatement } from './doubleEntry.ts'

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
  /** Broken invariants, each with rule, stream and revision (each is also a problem). */
  violations: Violation[]
  /** The hash chain: where it starts and its head (what an operator anchors). */
  chain: ChainReport
  /** The ledger as double entry (doubleEntry.ts): totals per account, which sum to zero. */
  doubleEntry: Omit<DoubleEntryStatement, 'postings'>
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
  opts: { accountId?: string; anchors?: readonly Anchor[]; decodedSeconds?: ReadonlyMap<string, number> } = {},
): AuditResult {
  const problems: string[] = []
  const stream = creditsStream.of(opts.accountId ?? 'unknown')
  const { violations, chain } = checkLedgerInvariants(stream, events, { holds, anchors: opts.anchors, decodedSeconds: opts.decodedSeconds })
  problems.push(...violations.map(violationLine))
  const statement: StatementLine[] = []
  let balance = 0
  let state = initialLedgerState()
  for (const { id, revision, event } of events) {
    const delta = balanceDelta(event, balance)
    balance += delta
    state = evolveLedger(state, event)
    if (isBookkeeping(event)) continue
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

  const { postings: _, ...books } = doubleEntry(events)
  if (books.sum !== 0 || books.unbalanced.length) problems.push(`the double-entry view does not balance (sum ${books.sum}; unbalanced entries at r${books.unbalanced.join(', r')})`)
  const booked = books.totals.find((t) => t.account === 'balance')?.amount ?? 0
  if (booked !== balance) problems.push(`the double-entry balance account ends at ${booked}, the replay at ${balance}`)

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
  return { statement, balance, problems, orphanHolds: orphans, violations, chain, doubleEntry: books, ok: problems.length === 0 }
}
