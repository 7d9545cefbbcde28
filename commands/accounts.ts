// Accounts and API keys: opening an account (with its credit ledger), issuing and revoking keys
// (with the OAuth grants a key approved), and authenticating a bearer token against the key's
// own stream.
import { randomBytes, randomUUID } from 'node:crypto'
import { ulid } from 'ulid'
import { accountDecider, accountStream } from '../domain/accounts/account.ts'
import { apiKeyDecider, apiKeyStream, displayPrefix, formatApiKey, hashSecret, parseApiKey, secretMatches } from '../domain/accounts/apiKey.ts'
import type { Plan } from '../domain/credits/plans.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'
import type { ApiKeyUsage } from './apiKeyUsage.ts'
import type { OAuthGrants } from './oauthGrants.ts'

export interface IssuedKey {
  keyId: string
  /** The only time the secret is visible. */
  apiKey: string
  prefix: string
  /** Where the key's event landed (for read-your-writes). */
  position: number | null
}

export interface Authenticated {
  accountId: string
  keyId: string
  plan: Plan
}

/**
 * How long a successful authentication is reused. Revoking a key in this process takes effect at
 * once; a revocation or plan change made by another process within this time.
 */
export const AUTH_CACHE_MS = 1000
const AUTH_CACHE_SIZE = 10_000

export class AccountCommands {
  private readonly authCache = new Map<string, { until: number; auth: Authenticated }>()

  constructor(
    private readonly handler: CommandHandler,
    private readonly credits: CreditCommands,
    /** Revoking a key revokes the OAuth grants it approved. */
    private readonly grants: OAuthGrants,
    private readonly clock: () => Date = () => new Date(),
    /** Records keys' last use (throttled); absent in the admin command. */
    private readonly usage: ApiKeyUsage | null = null,
  ) {}

  private now = () => this.clock().toISOString()

  /** Opens the account and its credit ledger; repeating it with the same id changes nothing. */
  async openAccount(o: { accountId?: string; name: string; email?: string | null; plan: Plan }): Promise<{ accountId: string }> {
    const accountId = o.accountId ?? randomUUID()
    await this.handler.handle(accountStream.of(accountId), { type: 'OpenAccount', accountId, name: o.name, email: o.email ?? null, now: this.now() }, accountDecider)
    await this.credits.open(accountId, o.plan)
    return { accountId }
  }

  async accountExists(accountId: string): Promise<boolean> {
    return (await this.handler.load(accountStream.of(accountId), accountDecider)).state.opened
  }

  async createApiKey(accountId: string, name = 'default'): Promise<IssuedKey> {
    if (!(await this.accountExists(accountId))) throw new Error(`no account ${accountId}`)
    const keyId = ulid()
    const secret = randomBytes(32).toString('base64url')
    const prefix = displayPrefix(keyId, secret)
    const r = await this.handler.handle(
      apiKeyStream.of(keyId),
      { type: 'CreateApiKey', keyId, accountId, name, prefix, secretHash: hashSecret(secret), now: this.now() },
      apiKeyDecider,
    )
    return { keyId, apiKey: formatApiKey(keyId, secret), prefix, position: r.position }
  }

  /**
   * Revokes the key, then every OAuth grant it approved. Returns where the revocation landed (null
   * when the key was revoked already) and how many grants went. The grants' tokens stop at once
   * either way: a grant's token check asks whether its approving key still stands.
   */
  async revokeApiKey(accountId: string, keyId: string, reason = 'revoked by the owner'): Promise<{ position: number | null; grantsRevoked: number }> {
    const r = await this.handler.handle(apiKeyStream.of(keyId), { type: 'RevokeApiKey', accountId, reason, now: this.now() }, apiKeyDecider)
    for (const [token, entry] of this.authCache) if (entry.auth.keyId === keyId) this.authCache.delete(token)
    return { position: r.position, grantsRevoked: await this.grants.revokeApprovedByKey(accountId, keyId) }
  }

  /** Null for anything that is not a live key of an open account. */
  async authenticate(token: string): Promise<Authenticated | null> {
    const now = Date.now()
    const cached = this.authCache.get(token)
    if (cached && cached.until > now) {
      this.usage?.seen(cached.auth.keyId, cached.auth.accountId)
      return cached.auth
    }
    const auth = await this.authenticateFromEvents(token)
    if (auth) this.usage?.seen(auth.keyId, auth.accountId)
    if (auth) {
      this.authCache.delete(token)
      this.authCache.set(token, { until: now + AUTH_CACHE_MS, auth })
      if (this.authCache.size > AUTH_CACHE_SIZE) this.authCache.delete(this.authCache.keys().next().value!)
    } else {
      this.authCache.delete(token)
    }
    return auth
  }

  private async authenticateFromEvents(token: string): Promise<Authenticated | null> {
    const parsed = parseApiKey(token)
    if (!parsed) return null
    const { state: key } = await this.handler.load(apiKeyStream.of(parsed.keyId), apiKeyDecider)
    if (key.status !== 'active' || !secretMatches(parsed.secret, key.secretHash)) return null
    const { state: ledger } = await this.credits.state(key.accountId)
    if (!ledger.opened) return null
    return { accountId: key.accountId, keyId: key.keyId, plan: ledger.plan }
  }
}
