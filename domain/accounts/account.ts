// An account, stream `account-<accountId>`: who the customer is. The plan and the credits live
// in the credit ledger (`credits-<accountId>`), the API keys in their own streams
// (`apikey-<keyId>`, see ./apiKey.ts), so authenticating a request reads one small stream.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { streamKind } from '../streams.ts'

export const accountStream = streamKind('account')

export type AccountOpened = DomainEvent<'AccountOpened', { accountId: string; name: string; email: string | null; at: string }>
export type AccountRenamed = DomainEvent<'AccountRenamed', { name: string; at: string }>
export type AccountEvent = AccountOpened | AccountRenamed

export type AccountCommand =
  | { type: 'OpenAccount'; accountId: string; name: string; email: string | null; now: string }
  | { type: 'RenameAccount'; name: string; now: string }

export interface AccountState {
  opened: boolean
  name: string
  email: string | null
}

export const accountDecider: Decider<AccountCommand, AccountEvent, AccountState> = {
  initialState: () => ({ opened: false, name: '', email: null }),
  evolve(s, e) {
    switch (e.type) {
      case 'AccountOpened':
        return { opened: true, name: e.data.name, email: e.data.email }
      case 'AccountRenamed':
        return { ...s, name: e.data.name }
    }
  },
  decide(c, s) {
    switch (c.type) {
      case 'OpenAccount':
        // Opening twice is a retry of the same request, not an error.
        if (s.opened) return []
        return [{ type: 'AccountOpened', data: { accountId: c.accountId, name: c.name, email: c.email, at: c.now } }]
      case 'RenameAccount':
        if (!s.opened) throw new DomainError('not_found', 'No such account.')
        if (c.name === s.name) return []
        return [{ type: 'AccountRenamed', data: { name: c.name, at: c.now } }]
    }
  },
}
