// The credit ledger read model: one entry per balance-changing event with the running balance,
// and one summary document per account. Entries are keyed by event id and the summary is
// guarded by stream revision, so re-applying an event changes nothing.
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import { balanceDelta, type CreditEvent } from '../domain/credits/ledger.ts'
import type { Projection } from './runner.ts'
import { applyBatched } from './batchedDocuments.ts'
import { capturedChargeId, creditsStream, entryReference, isBookkeeping } from '../domain/credits/ledger.ts'

export const LEDGER_ENTRIES = 'ledger_entries'
export const CREDIT_ACCOUNTS = 'credit_accounts'

export interface LedgerEntryDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  revision: number
  position: number
  type: CreditEvent['type']
  operation: string | null
  noteId: string | null
  /** The charge, reservation or refund this line is about. */
  reference: string | null
  /** Signed change of the spendable balance. */
  delta: number
  balanceAfter: number
  cycle: string | null
  at: string
}

export interface CreditAccountDoc {
  _id: string
  [key: string]: unknown
  plan: string
  cycle: string | null
  balance: number
  /** Credits held by open reservations. */
  reserved: number
  /** Credits spent in the current cycle (charges and captures, less refunds). */
  spentThisCycle: number
  /** Pending charges not yet completed or refunded (what the refund process manager looks at). */
  openCharges?: number
  openChargeIds?: string[]
  revision: number
  updatedAt: string
}

const accountIdOf = (streamName: string) => creditsStream.idOf(streamName)

export const ledgerProjection: Projection = {
  name: 'credit-ledger',
  filter: { categories: ['credits'] },
  collections: [LEDGER_ENTRIES, CREDIT_ACCOUNTS],
  async setup(docs) {
    await docs.collection(LEDGER_ENTRIES).createIndex({ keys: { accountId: 1, revision: 1 }, unique: true })
  },
  async handle(events, docs) {
    // One read of the accounts the batch touches and one write of their summaries
    // (projections/batchedDocuments.ts), the batch's entries written first in one write.
    let entries: LedgerEntryDoc[] = []
    await applyBatched(docs.collection<CreditAccountDoc>(CREDIT_ACCOUNTS), events, {
      idOf: (e) => accountIdOf(e.streamName),
      created: () => null,
      evolve: async (account, recorded) => {
        const next = evolveAccount(account, recorded)
        if (next.entry) entries.push(next.entry)
        return next.account
      },
      async beforeWrite() {
        // Keyed by event id, computed from the balance before the event: an entry written already
        // (a batch re-applied) is the same one, and its insert is refused as a duplicate.
        if (entries.length > 0) await docs.collection<LedgerEntryDoc>(LEDGER_ENTRIES).writeGuarded(entries.map((insert) => ({ insert })))
        entries = []
      },
    })
  },
}

/**
 * The account's summary after `recorded`, and the ledger line it adds. The summary is computed
 * from the one read and written only over that revision (projections/revisionGuard.ts), so a
 * late instance cannot put an older balance back.
 */
function evolveAccount(account: CreditAccountDoc | null, recorded: RecordedEvent): { account: CreditAccountDoc | null; entry: LedgerEntryDoc | null } {
  if (account && account.revision >= recorded.revision) return { account, entry: null }
  const e = toDomainEvent<CreditEvent>(recorded)
  const accountId = accountIdOf(recorded.streamName)
  const before = account?.balance ?? 0
  const balanceAfter = 'balanceAfter' in e.data ? e.data.balanceAfter : before
  const cycle = e.type === 'CreditCycleStarted' ? e.data.cycle : (account?.cycle ?? null)
  const entry: LedgerEntryDoc | null = isBookkeeping(e)
    ? null
    : {
        _id: recorded.id,
        accountId,
        revision: recorded.revision,
        position: recorded.globalPosition,
        type: e.type,
        operation: 'operation' in e.data ? e.data.operation : null,
        noteId: 'noteId' in e.data ? e.data.noteId : null,
        reference: entryReference(e),
        delta: balanceDelta(e, before),
        balanceAfter,
        cycle,
        at: e.data.at,
      }
  return {
    entry,
    account: {
      ...account,
      _id: accountId,
      plan: e.type === 'CreditAccountOpened' ? e.data.plan : e.type === 'CreditPlanChanged' ? e.data.to : e.type === 'CreditCycleStarted' ? e.data.plan : (account?.plan ?? 'free'),
      cycle,
      balance: balanceAfter,
      reserved: (account?.reserved ?? 0) + reservedDelta(e),
      spentThisCycle: e.type === 'CreditCycleStarted' ? 0 : (account?.spentThisCycle ?? 0) + spentDelta(e),
      ...openChargesAfter(account?.openChargeIds ?? [], e),
      revision: recorded.revision,
      updatedAt: e.data.at,
    },
  }
}

const reservedDelta = (e: CreditEvent): number =>
  e.type === 'CreditsReserved' ? e.data.amount : e.type === 'CreditsHoldExtended' ? e.data.by : e.type === 'CreditsCaptured' ? -e.data.reserved : e.type === 'CreditsReleased' ? -e.data.amount : 0

// A pending charge stays open until it completes or is refunded (a failed one waits for its refund).
function openChargesAfter(ids: string[], e: CreditEvent): { openCharges: number; openChargeIds: string[] } {
  const next =
    e.type === 'CreditsCharged' && e.data.pending
      ? [...ids, e.data.chargeId]
      : e.type === 'CreditsCaptured' && e.data.pending
        ? [...ids, capturedChargeId(e.data.reservationId, e.data.part)]
      : e.type === 'CreditsChargeCompleted' || e.type === 'CreditsRefunded'
        ? ids.filter((id) => id !== e.data.chargeId)
        : ids
  return { openCharges: next.length, openChargeIds: next }
}

const spentDelta = (e: CreditEvent): number =>
  e.type === 'CreditsCharged' ? e.data.cost : e.type === 'CreditsCaptured' ? e.data.cost : e.type === 'CreditsRefunded' ? -e.data.amount : 0

