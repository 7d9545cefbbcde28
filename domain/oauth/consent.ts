// What each account has approved, stream `oauthconsent-<accountId>`: the user approves a client
// once (spec part 5); later authorizations of the same client for no more than the approved
// scope skip the consent screen. Revoking the client on the dashboard withdraws the approval, so
// the next authorization shows the screen again.
import type { Decider, DomainEvent } from '../decider.ts'
import { scopeCovers, scopeList } from './tokens.ts'
import { streamKind } from '../streams.ts'

export const oauthConsentStream = streamKind('oauthconsent')

export type OAuthConsentGiven = DomainEvent<'OAuthConsentGiven', { accountId: string; clientId: string; scope: string; at: string }>
export type OAuthConsentWithdrawn = DomainEvent<'OAuthConsentWithdrawn', { accountId: string; clientId: string; at: string }>
export type OAuthConsentEvent = OAuthConsentGiven | OAuthConsentWithdrawn

export type OAuthConsentCommand =
  | { type: 'GiveConsent'; accountId: string; clientId: string; scope: string; now: string }
  | { type: 'WithdrawConsent'; accountId: string; clientId: string; now: string }

export interface OAuthConsentState {
  clients: Readonly<Record<string, { scope: string; at: string }>>
}

export const consentCovers = (s: OAuthConsentState, clientId: string, scope: string) => {
  const given = s.clients[clientId]
  return given !== undefined && scopeCovers(given.scope, scope)
}

export const oauthConsentDecider: Decider<OAuthConsentCommand, OAuthConsentEvent, OAuthConsentState> = {
  initialState: () => ({ clients: {} }),
  evolve(s, e) {
    if (e.type === 'OAuthConsentWithdrawn') {
      const { [e.data.clientId]: _, ...rest } = s.clients
      return { clients: rest }
    }
    return { clients: { ...s.clients, [e.data.clientId]: { scope: e.data.scope, at: e.data.at } } }
  },
  decide(c, s) {
    if (c.type === 'WithdrawConsent') {
      return s.clients[c.clientId] ? [{ type: 'OAuthConsentWithdrawn', data: { accountId: c.accountId, clientId: c.clientId, at: c.now } }] : []
    }
    if (consentCovers(s, c.clientId, c.scope)) return []
    // A wider request keeps what was approved before.
    const scope = [...new Set([...scopeList(s.clients[c.clientId]?.scope), ...scopeList(c.scope)])].join(' ')
    return [{ type: 'OAuthConsentGiven', data: { accountId: c.accountId, clientId: c.clientId, scope, at: c.now } }]
  },
}
