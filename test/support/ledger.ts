// The credit ledger of an account as its events say (the source the auditor replays).
import { creditsStream, type CreditEvent } from '../../domain/credits/ledger.ts'
import type { TestService } from './service.ts'

export async function ledgerEvents(s: TestService, accountId: string): Promise<CreditEvent[]> {
  const r = await s.services.events.readStream(creditsStream(accountId))
  return r.events.map((e) => ({ type: e.type, data: e.data }) as CreditEvent)
}

/** Charges and refunds of one operation, in order. */
export async function moves(s: TestService, accountId: string, operation: string) {
  const events = await ledgerEvents(s, accountId)
  const charges = events.flatMap((e) => (e.type === 'CreditsCharged' && e.data.operation === operation ? [e.data] : []))
  const refunds = events.flatMap((e) => (e.type === 'CreditsRefunded' && e.data.operation === operation ? [e.data] : []))
  return { charges, refunds }
}

export async function balance(s: TestService, accountId: string): Promise<number> {
  return (await s.services.credits.state(accountId)).state.balance
}
