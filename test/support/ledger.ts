// The credit ledger of an account as its events say (the source the auditor replays).
import { creditsStream, type CreditEvent } from '../../domain/credits/ledger.ts'
import { creditAccount, ledgerEntries } from '../../readmodels/ledger.ts'
import type { TestService } from './service.ts'
import { toDomainEvent, type EventStore } from '../../ports/eventStore.ts'
import { spawnSync } from 'node:child_process'

export async function ledgerEvents(s: TestService, accountId: string): Promise<CreditEvent[]> {
  return creditEventsIn(s.services.events, accountId)
}

/** The account's credit events read straight from an event store (e.g. the file a killed service child left). */
export async function creditEventsIn(events: EventStore, accountId: string): Promise<CreditEvent[]> {
  const r = await events.readStream(creditsStream.of(accountId))
  return r.events.map((e) => toDomainEvent<CreditEvent>(e))
}

export interface AuditReport {
  ok: boolean
  balance: number
  problems: string[]
  violations: unknown[]
  orphanHolds: { reservationId: string }[]
}

/** `scripts/audit-ledger.ts <accountId> --json` run on the stores `env` names: its exit status and report. */
export function auditAccount(accountId: string, env: NodeJS.ProcessEnv): { status: number | null; result: AuditReport } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/audit-ledger.ts', accountId, '--json'], { env, encoding: 'utf8', timeout: 60_000 })
  return { status: r.status, result: JSON.parse(r.stdout || '{}') as AuditReport }
}

/** Charges and refunds of one operation, in order. */
export async function moves(s: TestService, accountId: string, operation: string) {
  const events = await ledgerEvents(s, accountId)
  const charges = events.flatMap((e) => (e.type === 'CreditsCharged' && e.data.operation === operation ? [e.data] : []))
  const refunds = events.flatMap((e) => (e.type === 'CreditsRefunded' && e.data.operation === operation ? [e.data] : []))
  return { charges, refunds }
}

/** Reservations of one operation: holds made, parts captured out of them, what was released. */
export async function holds(s: TestService, accountId: string, operation: string) {
  const events = await ledgerEvents(s, accountId)
  const reserved = events.flatMap((e) => (e.type === 'CreditsReserved' && e.data.operation === operation ? [e.data] : []))
  const captured = events.flatMap((e) => (e.type === 'CreditsCaptured' && e.data.operation === operation ? [e.data] : []))
  const released = events.flatMap((e) => (e.type === 'CreditsReleased' && e.data.operation === operation ? [e.data] : []))
  return { reserved, captured, released }
}

export async function balance(s: TestService, accountId: string): Promise<number> {
  return (await s.services.credits.state(accountId)).state.balance
}

/**
 * The ledger read model of an account once it has caught up with the credit stream, as the
 * movements a client sees (type, operation, delta, balance after): two accounts that did the
 * same thing through different edges have equal shapes.
 */
export async function ledgerShape(s: TestService, accountId: string) {
  const { revision } = await s.services.credits.state(accountId)
  for (let i = 0; i < 200; i++) {
    // The account summary follows every event; bookkeeping events (a pending charge completed) have no line.
    const caughtUp = ((await creditAccount(s.docs, accountId))?.revision ?? -1) >= revision
    const entries = await ledgerEntries(s.docs, accountId)
    if (caughtUp) {
      return entries.map((e) => ({ type: e.type, operation: e.operation, delta: e.delta, balanceAfter: e.balanceAfter }))
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error('the ledger read model did not catch up')
}
