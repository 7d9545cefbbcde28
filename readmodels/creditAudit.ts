// The auditor's verdict for one account: its credit stream replayed by `auditLedger` and held
// against the ledger read model, once the read model has caught up with the stream (so a line
// still on its way is not reported as missing). `npm run audit-ledger` and the dashboard's
// credits page both call this.
import { auditLedger, openHolds, type AuditResult } from '../domain/credits/audit.ts'
import { ownerNotesToCheck } from '../domain/credits/holds.ts'
import { noteStream } from '../domain/notes/note.ts'
import { creditsStream, type CreditEvent } from '../domain/credits/ledger.ts'
import { PRICES } from '../domain/credits/prices.ts'
import type { Anchor } from '../domain/credits/chain.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type EventStore } from '../ports/eventStore.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import { creditAccount, ledgerEntries } from './ledger.ts'

export interface CreditAuditDeps {
  events: EventStore
  docs: DocumentStore
  sync: ReadModelSync
  /** Holds older than this whose owner never appeared are reported (CREDIT_HOLD_LEASE_SECONDS). */
  holdLeaseMs: number
  clock?: () => Date
}

/** Null when the account has no credit ledger. */
export async function auditAccountLedger(deps: CreditAuditDeps, accountId: string, anchors: readonly Anchor[] = []): Promise<(AuditResult & { accountId: string; auditedAt: string }) | null> {
  const read = await deps.events.readStream(creditsStream.of(accountId))
  if (!read.streamExists) return null
  await deps.sync.waitFor('credit-ledger', read.events.at(-1)?.globalPosition ?? null)
  const events = read.events.map((e) => ({ id: e.id, revision: e.revision, event: toDomainEvent<CreditEvent>(e) }))
  const existing = new Set<string>()
  for (const noteId of ownerNotesToCheck(openHolds(events))) if ((await deps.events.readStream(noteStream.of(noteId), { maxCount: 1 })).streamExists) existing.add(noteId)
  const now = (deps.clock ?? (() => new Date()))().toISOString()
  const result = auditLedger(
    events,
    { lines: await ledgerEntries(deps.docs, accountId), balance: (await creditAccount(deps.docs, accountId))?.balance ?? null },
    { now, leaseMs: deps.holdLeaseMs, noteExists: (id) => existing.has(id) },
    { accountId, anchors, decodedSeconds: await decodedLengths(deps.events, events.map((e) => e.event)) },
  )
  return { accountId, auditedAt: now, ...result }
}

/** The audit as the dashboard calls it. */
export const creditAudit = (deps: CreditAuditDeps) => ({ account: (accountId: string) => auditAccountLedger(deps, accountId) })
export type CreditAudit = ReturnType<typeof creditAudit>

/**
 * The decoded length each captured import's note records (NoteReady.decodedSeconds), so the
 * price rule can hold the capture against the audio rather than the file's header. A deleted
 * note's events are shredded and say nothing: its capture is checked against the price table only.
 */
async function decodedLengths(store: EventStore, ledger: readonly CreditEvent[]): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  for (const e of ledger) {
    if (e.type !== 'CreditsCaptured' || e.data.operation !== PRICES.import.operation || !e.data.noteId || out.has(e.data.noteId)) continue
    const read = await store.readStream(noteStream.of(e.data.noteId))
    const ready = [...read.events].reverse().find((x) => x.type === 'NoteReady')
    const seconds = (ready?.data as { decodedSeconds?: unknown } | undefined)?.decodedSeconds
    if (typeof seconds === 'number') out.set(e.data.noteId, seconds)
  }
  return out
}
