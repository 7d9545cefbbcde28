// The account's plan, credits and usage (MCP founder_status, REST GET /v1/account/status). The
// balance comes from the ledger's own stream, so it is exact the moment a charge is stored; the
// per-operation usage comes from the ledger read model, which is first brought up to the same
// revision, so the two always add up.
import { DomainError } from '../domain/errors.ts'
import { MONTHLY_CREDITS, PLAN_LIMITS, REST_MIN_PLAN, cycleOf, planAtLeast } from '../domain/credits/plans.ts'
import { creditsStream, ledgerDecider } from '../domain/credits/ledger.ts'
import { usageDecider, usageStream } from '../domain/usage/usage.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { NOTES } from '../projections/notes.ts'
import { CREDIT_ACCOUNTS, LEDGER_ENTRIES, type CreditAccountDoc, type LedgerEntryDoc } from '../projections/ledger.ts'
import type { AccountStatus } from '../contract/account.ts'
import type { Decider, DomainEvent } from '../domain/decider.ts'
import type { Caller } from '../commands/context.ts'

/** Reads an aggregate's current state (the command handler, with its fold cache). */
export interface StateLoader {
  load<Event extends DomainEvent, State>(streamName: string, decider: Decider<never, Event, State>): Promise<{ state: State; revision: number }>
}

/** First instant of the month after `cycle` (YYYY-MM), UTC. */
const nextCycleStart = (cycle: string) => {
  const [y, m] = cycle.split('-').map(Number) as [number, number]
  return new Date(Date.UTC(y, m, 1)).toISOString()
}

export class AccountStatusQueries {
  constructor(
    private readonly handler: StateLoader,
    private readonly docs: DocumentStore,
    private readonly clock: () => Date = () => new Date(),
    private readonly readModelWaitMs = 2000,
  ) {}

  async status(caller: Pick<Caller, 'accountId'>): Promise<AccountStatus> {
    const { accountId } = caller
    const { state: ledger, revision } = await this.handler.load(creditsStream.of(accountId), ledgerDecider)
    if (!ledger.opened) throw new DomainError('not_found', 'No such account.')
    const cycle = cycleOf(this.clock())
    // A month that has begun without a command yet: its first command will grant the plan's credits.
    const current = ledger.cycle === cycle
    const reserved = Object.values(ledger.reservations).reduce((n, r) => n + r.amount, 0)
    await this.ledgerReadModelAt(accountId, revision)
    const entries = current ? await this.docs.collection<LedgerEntryDoc>(LEDGER_ENTRIES).find({ accountId, cycle }, { sort: { revision: 1 } }) : []
    const byOperation = new Map<string, { operation: string; count: number; credits: number }>()
    for (const e of entries) {
      if (!e.operation) continue
      const row = byOperation.get(e.operation) ?? { operation: e.operation, count: 0, credits: 0 }
      if (e.type === 'CreditsCharged' || e.type === 'CreditsReserved') row.count += 1
      row.credits -= e.delta
      byOperation.set(e.operation, row)
    }
    const notes = this.docs.collection(NOTES)
    const [total, processing, ready, failed] = await Promise.all([
      notes.countDocuments({ accountId }),
      notes.countDocuments({ accountId, status: 'processing' }),
      notes.countDocuments({ accountId, status: 'ready' }),
      notes.countDocuments({ accountId, status: 'failed' }),
    ])
    const { state: usage } = await this.handler.load(usageStream.of(accountId), usageDecider)
    const limits = PLAN_LIMITS[ledger.plan]
    const account = current ? await this.docs.collection<CreditAccountDoc>(CREDIT_ACCOUNTS).findOne({ _id: accountId }) : null
    return {
      accountId,
      plan: ledger.plan,
      restApi: { available: planAtLeast(ledger.plan, REST_MIN_PLAN), requiredPlan: REST_MIN_PLAN },
      credits: {
        cycle,
        monthly: MONTHLY_CREDITS[ledger.plan],
        left: current ? ledger.balance : MONTHLY_CREDITS[ledger.plan],
        reserved: current ? reserved : 0,
        spent: current ? (account?.spentThisCycle ?? 0) : 0,
        resetsAt: nextCycleStart(cycle),
      },
      usage: {
        byOperation: [...byOperation.values()].sort((a, b) => a.operation.localeCompare(b.operation)),
        notes: { total, processing, ready, failed },
        uploadMinutes: { used: usage.cycle === cycle ? usage.minutesUsed : 0, quota: limits.monthlyMinutes },
        storage: { usedBytes: usage.storedBytes, quotaBytes: limits.storageBytes },
      },
    }
  }

  /** Waits (briefly, bounded) until the ledger projection has applied the stream up to `revision`. */
  private async ledgerReadModelAt(accountId: string, revision: number) {
    const deadline = Date.now() + this.readModelWaitMs
    const accounts = this.docs.collection<CreditAccountDoc>(CREDIT_ACCOUNTS)
    while (Date.now() < deadline) {
      const doc = await accounts.findOne({ _id: accountId }, { projection: { revision: 1 } })
      if (doc && doc.revision >= revision) return
      await new Promise((r) => setTimeout(r, 15))
    }
  }
}
