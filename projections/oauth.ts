// The AI clients an account has authorised (the dashboard's OAuth page): registered clients
// (`oauth_clients`: name and site, never a secret), each account's approvals
// (`oauth_consents`, one per account and client) and grants (`oauth_grants`: status, when tokens
// were last issued, hard expiry; never a token hash). Guarded by stream revision (grants) or by
// the event's time (approvals, whose stream holds every client of an account); every write
// carries the revision it read in its filter (projections/revisionGuard.ts).
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import { oauthClientStream, type OAuthClientEvent } from '../domain/oauth/client.ts'
import { oauthConsentStream, type OAuthConsentEvent } from '../domain/oauth/consent.ts'
import { oauthGrantStream, type OAuthGrantEvent, type RevocationReason } from '../domain/oauth/grant.ts'
import type { Projection } from './runner.ts'
import { insertIfAbsent, replaceRead, updateRead } from './revisionGuard.ts'

export const OAUTH_CLIENTS = 'oauth_clients'
export const OAUTH_CONSENTS = 'oauth_consents'
export const OAUTH_GRANTS = 'oauth_grants'

export interface OAuthClientDoc {
  _id: string
  [key: string]: unknown
  clientName: string | null
  clientUri: string | null
  registeredAt: string
}

export interface OAuthConsentDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  clientId: string
  scope: string
  approvedAt: string
  withdrawnAt: string | null
  /** Revision of the account's consent stream last applied to this document. */
  revision: number
}

export interface OAuthGrantDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  clientId: string
  scope: string
  status: 'active' | 'revoked'
  grantedAt: string
  /** When tokens were last issued (code redeemed or refreshed): the client's last sign of life. */
  lastTokenAt: string | null
  expiresAt: string
  revokedAt: string | null
  revokedReason: RevocationReason | null
  revision: number
}

export const oauthProjection: Projection = {
  name: 'oauth',
  filter: { categories: ['oauthclient', 'oauthconsent', 'oauthgrant'] },
  collections: [OAUTH_CLIENTS, OAUTH_CONSENTS, OAUTH_GRANTS],
  async setup(docs) {
    await docs.collection(OAUTH_CONSENTS).createIndex({ keys: { accountId: 1, approvedAt: -1 }, name: 'by_account' })
    await docs.collection(OAUTH_GRANTS).createIndex({ keys: { accountId: 1, clientId: 1 }, name: 'by_account_client' })
  },
  async handle(events, docs) {
    for (const e of events) {
      if (oauthClientStream.owns(e.streamName)) await applyClient(e, docs)
      else if (oauthConsentStream.owns(e.streamName)) await applyConsent(e, docs)
      else await applyGrant(e, docs)
    }
  },
}

async function applyClient(r: RecordedEvent, docs: DocumentStore) {
  const e = toDomainEvent<OAuthClientEvent>(r)
  if (e.type !== 'OAuthClientRegistered') return
  // Registered once and never changed: the first write stands.
  await insertIfAbsent(docs.collection<OAuthClientDoc>(OAUTH_CLIENTS), { _id: e.data.clientId, clientName: e.data.clientName, clientUri: e.data.clientUri, registeredAt: e.data.at })
}

async function applyConsent(r: RecordedEvent, docs: DocumentStore) {
  const e = toDomainEvent<OAuthConsentEvent>(r)
  const c = docs.collection<OAuthConsentDoc>(OAUTH_CONSENTS)
  const id = `${e.data.accountId}:${e.data.clientId}`
  const doc = await c.findOne({ _id: id })
  if (doc && doc.revision >= r.revision) return
  if (e.type === 'OAuthConsentGiven') {
    const d = e.data
    await replaceRead(c, doc, { _id: id, accountId: d.accountId, clientId: d.clientId, scope: d.scope, approvedAt: d.at, withdrawnAt: null, revision: r.revision })
  } else if (doc) {
    await updateRead(c, doc, { $set: { withdrawnAt: e.data.at, revision: r.revision } })
  }
}

async function applyGrant(r: RecordedEvent, docs: DocumentStore) {
  const e = toDomainEvent<OAuthGrantEvent>(r)
  const c = docs.collection<OAuthGrantDoc>(OAUTH_GRANTS)
  const id = oauthGrantStream.idOf(r.streamName)
  const doc = await c.findOne({ _id: id })
  if (doc && doc.revision >= r.revision) return
  switch (e.type) {
    case 'OAuthAuthorizationGranted': {
      const d = e.data
      await replaceRead(c, doc, {
        _id: id,
        accountId: d.accountId,
        clientId: d.clientId,
        scope: d.scope,
        status: 'active',
        grantedAt: d.at,
        lastTokenAt: null,
        expiresAt: d.expiresAt,
        revokedAt: null,
        revokedReason: null,
        revision: r.revision,
      })
      return
    }
    case 'OAuthCodeRedeemed':
    case 'OAuthTokensRefreshed':
      if (doc) await updateRead(c, doc, { $set: { lastTokenAt: e.data.at, revision: r.revision } })
      return
    case 'OAuthGrantRevoked':
      if (doc) await updateRead(c, doc, { $set: { status: 'revoked', revokedAt: e.data.at, revokedReason: e.data.reason, revision: r.revision } })
      return
  }
}
