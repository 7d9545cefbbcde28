// What each account has approved, stream `oauthconsent-<accountId>`: the user approves a client
// once (spec part 5); later authorizations of the same client for no more than the approved
// scope skip the consent screen.
import type { Decider, DomainEvent } from '../decider.ts'
import { scopeCovers, scopeList } from './tokens.ts'

export const oauthConsentStream = (accountId: string) => `oauthconsent-${accountId}`

export type OAuthConsentGiven = DomainEvent<'OAuthConsentGiven', { accountId: string; clientId: string; scope: string; at: string }>
export type OAuthConsentEvent = OAuthConsentGiven

export type OAuthConsentCommand = { type: 'GiveConsent'; accountId: string; clientId: string; scope: string; now: string }

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
    return { clients: { ...s.clients, [e.data.clientId]: { scope: e.data.scope, at: e.data.at } } }
  },
  decide(c, s) {
    if (consentCovers(s, c.clientId, c.scope)) return []
    // A wider request keeps what was approved before.
    const scope = [...new Set([...scopeList(s.clients[c.clientId]?.scope), ...scopeList(c.scope)])].join(' ')
    return [{ type: 'OAuthConsentGiven', data: { accountId: c.accountId, clientId: c.clientId, scope, at: c.now } }]
  },
}
