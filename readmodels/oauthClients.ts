// The AI clients an account has authorised: every client it approved (and has not revoked) or
// still holds a live grant for, with what it may do and when it last got tokens.
import type { DocumentStore } from '../ports/documentStore.ts'
import { OAUTH_CLIENTS, OAUTH_CONSENTS, OAUTH_GRANTS, type OAuthClientDoc, type OAuthConsentDoc, type OAuthGrantDoc } from '../projections/oauth.ts'
import type { AuthorizedClientList } from '../contract/dashboard.ts'

const latest = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a > b ? a : b)

export async function listAuthorizedClients(docs: DocumentStore, accountId: string, now = new Date().toISOString()): Promise<AuthorizedClientList> {
  const [consents, grants] = await Promise.all([
    docs.collection<OAuthConsentDoc>(OAUTH_CONSENTS).find({ accountId, withdrawnAt: null }),
    docs.collection<OAuthGrantDoc>(OAUTH_GRANTS).find({ accountId, status: 'active', expiresAt: { $gt: now } }),
  ])
  const ids = [...new Set([...consents.map((c) => c.clientId), ...grants.map((g) => g.clientId)])]
  const clients = ids.length ? await docs.collection<OAuthClientDoc>(OAUTH_CLIENTS).find({ _id: { $in: ids } }) : []
  const byId = new Map(clients.map((c) => [c._id, c]))
  const out = ids.map((clientId) => {
    const consent = consents.find((c) => c.clientId === clientId) ?? null
    const live = grants.filter((g) => g.clientId === clientId)
    const client = byId.get(clientId)
    return {
      clientId,
      clientName: client?.clientName ?? null,
      clientUri: client?.clientUri ?? null,
      scope: consent?.scope ?? live[0]?.scope ?? '',
      approvedAt: consent?.approvedAt ?? live.map((g) => g.grantedAt).sort()[0] ?? null,
      activeGrants: live.length,
      lastTokenAt: live.reduce<string | null>((m, g) => latest(m, g.lastTokenAt), null),
      expiresAt: live.reduce<string | null>((m, g) => latest(m, g.expiresAt), null),
    }
  })
  out.sort((a, b) => (b.approvedAt ?? '').localeCompare(a.approvedAt ?? ''))
  return { clients: out }
}
