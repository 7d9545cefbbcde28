// The auditor's verdict for one account: its credit stream replayed by `auditLedger` and held
// against the ledger read model, once the read model has caught up with the stream (so a line
// still on its way is not reported as missing). `npm run audit-ledger` and the dashboard's
// credits page both call this.
import { auditLedger, type AuditResult } from '../domain/credits/audit.ts'
import { creditsStream, type CreditEvent } from '../domain/credits/ledger.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type EventStore } from '../ports/eventStore.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import { creditAccount, ledgerEntries } from './ledger.ts'

export interface CreditAuditDeps {
  events: EventStore
  docs: DocumentStore
  sync: ReadModelSync
}

/** Null when the account has no credit ledger. */
export async function auditAccountLedger(d: CreditAuditDeps, accountId: string): Promise<(AuditResult & { accountId: string; auditedAt: string }) | null> {
  const read = await d.events.readStream(creditsStream.of(accountId))
  if (!read.streamExists) return null
  await d.sync.waitFor('credit-ledger', read.events.at(-1)?.globalPosition ?? null)
  const result = auditLedger(
    read.events.map((e) => ({ id: e.id, revision: e.revision, event: toDomainEvent<CreditEvent>(e) })),
    { lines: await ledgerEntries(d.docs, accountId), balance: (await creditAccount(d.docs, accountId))?.balance ?? null },
  )
  return { accountId, auditedAt: new Date().toISOString(), ...result }
}

/** The audit as the dashboard calls it. */
export const creditAudit = (d: CreditAuditDeps) => ({ account: (accountId: string) => auditAccountLedger(d, accountId) })
export type CreditAudit = ReturnType<typeof creditAudit>
