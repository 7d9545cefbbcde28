// An account's OAuth grants as the event store has them (the admin command runs without read
// models): listing them, revoking one, and revoking every grant an API key approved on the
// consent page, which revoking that key does (AccountCommands.revokeApiKey). Grants are found
// by their OAuthAuthorizationGranted event; each one's state is its own stream folded.
import { oauthClientDecider, oauthClientStream } from '../domain/oauth/client.ts'
import { oauthGrantDecider, oauthGrantStream, type GrantApprover, type OAuthAuthorizationGranted, type RevocationReason } from '../domain/oauth/grant.ts'
import { START, type EventStore } from '../ports/eventStore.ts'
import type { CommandHandler } from './handleCommand.ts'

export interface GrantSummary {
  grantId: string
  clientId: string
  clientName: string | null
  status: 'active' | 'revoked' | 'expired'
  revokedReason: RevocationReason | null
  approvedBy: GrantApprover | null
  grantedAt: string
  expiresAt: string
}

const PAGE = 1000

export class OAuthGrants {
  constructor(
    private readonly events: EventStore,
    private readonly handler: CommandHandler,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  private async grantIdsWhere(match: (d: OAuthAuthorizationGranted['data']) => boolean): Promise<string[]> {
    const ids: string[] = []
    for (let after = START; ; ) {
      const page = await this.events.readAll({ after, maxCount: PAGE, filter: { eventTypes: ['OAuthAuthorizationGranted'] } })
      for (const e of page) if (match(e.data as OAuthAuthorizationGranted['data'])) ids.push((e.data as OAuthAuthorizationGranted['data']).grantId)
      if (page.length < PAGE) return ids
      after = page[page.length - 1]!.globalPosition
    }
  }

  /** Every grant of the account, newest first. */
  async list(accountId: string): Promise<GrantSummary[]> {
    const now = this.clock().toISOString()
    const out: GrantSummary[] = []
    for (const grantId of await this.grantIdsWhere((d) => d.accountId === accountId)) {
      const { state: g } = await this.handler.load(oauthGrantStream.of(grantId), oauthGrantDecider)
      if (g.status === 'none') continue
      const { state: client } = await this.handler.load(oauthClientStream.of(g.clientId), oauthClientDecider)
      out.push({
        grantId,
        clientId: g.clientId,
        clientName: client.registered ? client.clientName : null,
        status: g.status === 'active' && Date.parse(g.expiresAt) <= Date.parse(now) ? 'expired' : g.status,
        revokedReason: g.revokedReason,
        approvedBy: g.approvedBy,
        grantedAt: g.grantedAt,
        expiresAt: g.expiresAt,
      })
    }
    return out.sort((a, b) => b.grantedAt.localeCompare(a.grantedAt))
  }

  /** Revokes one of the account's grants; false when it is not the account's or not active. */
  async revoke(accountId: string, grantId: string, reason: RevocationReason): Promise<boolean> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(grantId)) return false
    const { state } = await this.handler.load(oauthGrantStream.of(grantId), oauthGrantDecider)
    if (state.status !== 'active' || state.accountId !== accountId) return false
    await this.handler.handle(oauthGrantStream.of(grantId), { type: 'RevokeGrant', reason, now: this.clock().toISOString() }, oauthGrantDecider)
    return true
  }

  /** Revokes every active grant the API key approved; how many. */
  async revokeApprovedByKey(accountId: string, keyId: string): Promise<number> {
    let revoked = 0
    const approvedByKey = (d: OAuthAuthorizationGranted['data']) => d.accountId === accountId && d.approvedBy?.kind === 'api_key' && d.approvedBy.keyId === keyId
    for (const grantId of await this.grantIdsWhere(approvedByKey)) if (await this.revoke(accountId, grantId, 'api_key_revoked')) revoked++
    return revoked
  }
}
