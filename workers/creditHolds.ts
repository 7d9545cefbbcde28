// The hold sweeper, which also runs the refund process manager's pass (pending charges that
// failed or outlived the lease are refunded: CreditCommands.settleCharges). It releases, by a ledger event, every credit hold older than the lease whose
// owner never appeared (domain/credits/holds.ts), e.g. an import whose process died between
// reserving the credits and creating the note. Accounts with something held are found through
// the ledger read model; what is released is decided on the ledger stream itself (the release is
// idempotent and refused for a hold that was captured meanwhile), so two sweepers, or a sweeper
// racing the owner, never give credits back twice.
import { startPeriodicSweep } from './periodicSweep.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { CommandHandler } from '../commands/handleCommand.ts'
import type { CreditCommands } from '../commands/credits.ts'
import { isDomainError } from '../domain/errors.ts'
import { orphanHolds, orphanReason, ownerNotesToCheck } from '../domain/credits/holds.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'
import { CREDIT_ACCOUNTS, type CreditAccountDoc } from '../projections/ledger.ts'

export interface HoldSweeperDeps {
  handler: CommandHandler
  credits: CreditCommands
  docs: DocumentStore
  leaseMs: number
  checkEveryMs: number
  clock?: () => Date
  log?: (msg: string) => void
}

const BATCH = 500

export function startHoldSweeper(deps: HoldSweeperDeps) {
  const clock = deps.clock ?? (() => new Date())
  const log = deps.log ?? (() => {})

  /** One pass; returns the holds released. */
  async function pass(stopped: () => boolean): Promise<number> {
    const accounts = await deps.docs.collection<CreditAccountDoc>(CREDIT_ACCOUNTS).find({ reserved: { $gt: 0 } }, { limit: BATCH, projection: { _id: 1 } })
    let released = 0
    for (const { _id: accountId } of accounts) {
      if (stopped()) break
      const { state } = await deps.credits.state(accountId)
      const existing = new Set<string>()
      for (const noteId of ownerNotesToCheck(state.reservations)) {
        if ((await deps.handler.load(noteStream.of(noteId), noteDecider)).state.exists) existing.add(noteId)
      }
      for (const hold of orphanHolds(state.reservations, clock().toISOString(), deps.leaseMs, (id) => existing.has(id))) {
        try {
          const r = await deps.credits.release(accountId, hold.reservationId, `released by the hold sweeper: ${orphanReason(hold, deps.leaseMs)}`.slice(0, 500))
          if (r.events.some((e) => e.type === 'CreditsReleased')) {
            released++
            log(`[credit-holds] account ${accountId}: ${orphanReason(hold, deps.leaseMs)}; released`)
          }
        } catch (err) {
          // Captured by its owner in the meantime: nothing to give back.
          if (!(isDomainError(err) && err.code === 'conflict')) throw err
        }
      }
    }
    await settleCharges(stopped)
    return released
  }

  /** The refund process manager's pass: accounts with a pending charge (CreditCommands.settleCharges). */
  async function settleCharges(stopped: () => boolean = () => false): Promise<number> {
    const accounts = await deps.docs.collection<CreditAccountDoc>(CREDIT_ACCOUNTS).find({ openCharges: { $gt: 0 } }, { limit: BATCH, projection: { _id: 1 } })
    let refunded = 0
    for (const { _id: accountId } of accounts) {
      if (stopped()) break
      const n = await deps.credits.settleCharges(accountId)
      if (n > 0) log(`[credit-holds] account ${accountId}: ${n} failed or expired charge(s) refunded`)
      refunded += n
    }
    return refunded
  }

  return { ...startPeriodicSweep({ name: 'credit-holds', everyMs: deps.checkEveryMs, firstAfterMs: 1000, pass, log }), settleCharges: () => settleCharges() }
}
