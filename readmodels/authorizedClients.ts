// The AI clients an account has authorised through OAuth (MCP), for the dashboard: the list,
// and revoking a client, which withdraws the approval and revokes every grant the account gave
// it, so its tokens stop working at once and a new authorization asks again.
import { DomainError } from '../domain/errors.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import { OAUTH_GRANTS, type OAuthGrantDoc } from '../projections/oauth.ts'
import { listAuthorizedClients } from './oauthClients.ts'
import type { AuthorizedClientList } from '../contract/dashboard.ts'
import type { Caller } from '../commands/context.ts'

/** The two OAuth commands a revocation is made of (commands/oauth.ts); each returns where it landed. */
export interface ClientRevocation {
  withdrawConsent(accountId: string, clientId: string): Promise<number | null>
  revokeGrantOf(accountId: string, grantId: string): Promise<number | null>
}

export class AuthorizedClients {
  constructor(private readonly deps: { oauth: ClientRevocation; docs: DocumentStore; sync: ReadModelSync }) {}

  list(caller: Caller): Promise<AuthorizedClientList> {
    return listAuthorizedClients(this.deps.docs, caller.accountId)
  }

  async revoke(caller: Caller, clientId: string): Promise<AuthorizedClientList> {
    const listed = await this.list(caller)
    if (!listed.clients.some((c) => c.clientId === clientId)) throw new DomainError('not_found', 'No authorised client with that id.')
    let last = await this.deps.oauth.withdrawConsent(caller.accountId, clientId)
    const grants = await this.deps.docs.collection<OAuthGrantDoc>(OAUTH_GRANTS).find({ accountId: caller.accountId, clientId, status: 'active' })
    for (const g of grants) last = (await this.deps.oauth.revokeGrantOf(caller.accountId, g._id)) ?? last
    await this.deps.sync.waitFor('oauth', last)
    return this.list(caller)
  }
}
