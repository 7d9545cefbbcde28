// The OAuth 2.1 authorization server (spec part 5, MCP authorization): dynamic client
// registration, the checks of an authorization request, consent, codes, token issuance with
// rotation, revocation, and the access-token check the MCP edge runs. Every change is an event on
// `oauthclient-<id>`, `oauthconsent-<accountId>` or `oauthgrant-<id>`; tokens exist only in the
// responses, the streams keep their SHA-256.
import { randomBytes, randomUUID } from 'node:crypto'
import { OAuthError } from '../domain/oauth/errors.ts'
import { oauthClientDecider, oauthClientStream, redirectUriMatches, type ClientRegistration, type GrantType, type OAuthClientState, type TokenEndpointAuthMethod } from '../domain/oauth/client.ts'
import { consentCovers, oauthConsentDecider, oauthConsentStream } from '../domain/oauth/consent.ts'
import { accessTokenOwner, oauthGrantDecider, oauthGrantStream, type GrantApprover, type OAuthGrantEvent, type OAuthGrantState } from '../domain/oauth/grant.ts'
import { DEFAULT_SCOPE, formatToken, hashTokenSecret, isS256Challenge, parseToken, sameHash, scopeList, unknownScopes } from '../domain/oauth/tokens.ts'
import { accountDecider, accountStream } from '../domain/accounts/account.ts'
import { apiKeyDecider, apiKeyStream } from '../domain/accounts/apiKey.ts'
import type { Plan } from '../domain/credits/plans.ts'
import type { AuthorizationRequest, ClientRegistrationRequest, ClientRegistrationResponse, RevocationRequest, TokenRequest, TokenResponse } from '../contract/oauth.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'

export interface OAuthConfig {
  /** The authorization server's issuer identifier: {base_url}. */
  issuer: string
  /** The MCP resources tokens are issued for ({mcp_url} and {base_url}/mcp/stream); the first is the default. */
  resources: readonly string[]
}

export type RegisteredClient = Extract<OAuthClientState, { registered: true }>

/** An authorization request that passed every check: what the consent page shows and approves. */
export interface ValidAuthorization {
  client: RegisteredClient
  redirectUri: string
  /** The request named redirect_uri (else the only registered one is used): the token request must name it too. */
  redirectUriGiven: boolean
  codeChallenge: string
  scope: string
  resource: string
  state: string | null
}

/**
 * A refused request is shown on our error page, never redirected: an unknown client or redirect
 * URI cannot be trusted (RFC 6749 section 4.1.2.1), and neither can a redirect URI anyone may
 * register, before the person has signed in and consented (RFC 9700 section 4.11.2: otherwise a
 * deliberately wrong request makes this server an open redirector to the registrant's site).
 */
export type CheckedAuthorization = { ok: true; request: ValidAuthorization } | { ok: false; error: string; description: string }

export interface OAuthCaller {
  accountId: string
  plan: Plan
  grantId: string
  clientId: string
  scope: string
  /** The resource (RFC 8707 audience) the token was issued for. */
  resource: string
}

/** Client credentials as presented at the token or revocation endpoint. */
export interface PresentedClient {
  basic: { clientId: string; secret: string } | null
  clientId: string | undefined
  clientSecret: string | undefined
}

const newSecret = () => randomBytes(32).toString('base64url')
export const trimSlash = (u: string) => u.replace(/\/+$/, '')

export class OAuthCommands {
  private readonly clock: () => Date

  constructor(
    private readonly handler: CommandHandler,
    private readonly credits: CreditCommands,
    readonly config: OAuthConfig,
    clock?: () => Date,
  ) {
    this.clock = clock ?? (() => new Date())
  }

  private now = () => this.clock().toISOString()

  // ---- registration (RFC 7591) ----------------------------------------------------------------

  async registerClient(req: ClientRegistrationRequest): Promise<ClientRegistrationResponse> {
    const method: TokenEndpointAuthMethod = req.token_endpoint_auth_method ?? 'client_secret_basic'
    // Most clients ask for both grants; one that names neither gets both, so it can refresh.
    const grantTypes: GrantType[] = req.grant_types ? [...new Set(req.grant_types)] : ['authorization_code', 'refresh_token']
    if (!grantTypes.includes('authorization_code')) throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code')
    const scope = req.scope ?? DEFAULT_SCOPE
    const unknown = unknownScopes(scope)
    if (unknown.length > 0 || scopeList(scope).length === 0) throw new OAuthError('invalid_client_metadata', `unknown scope: ${unknown.join(' ') || '(empty)'}; supported: ${DEFAULT_SCOPE}`)
    if (req.client_uri !== undefined && !/^https?:\/\//.test(req.client_uri)) throw new OAuthError('invalid_client_metadata', 'client_uri must be an http(s) URL')
    const clientId = randomUUID()
    const secret = method === 'none' ? null : newSecret()
    const registration: ClientRegistration = {
      clientId,
      clientName: req.client_name?.trim() || null,
      clientUri: req.client_uri ?? null,
      redirectUris: [...new Set(req.redirect_uris)],
      grantTypes,
      scope: scopeList(scope).join(' '),
      tokenEndpointAuthMethod: method,
      clientSecretHash: secret ? hashTokenSecret(secret) : null,
      softwareId: req.software_id ?? null,
      softwareVersion: req.software_version ?? null,
    }
    const now = this.now()
    await this.handler.handle(oauthClientStream.of(clientId), { type: 'RegisterClient', registration, now }, oauthClientDecider)
    return {
      client_id: clientId,
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      client_id_issued_at: Math.floor(Date.parse(now) / 1000),
      redirect_uris: registration.redirectUris,
      token_endpoint_auth_method: method,
      grant_types: grantTypes,
      response_types: ['code'],
      ...(registration.clientName ? { client_name: registration.clientName } : {}),
      ...(registration.clientUri ? { client_uri: registration.clientUri } : {}),
      scope: registration.scope,
      ...(registration.softwareId ? { software_id: registration.softwareId } : {}),
      ...(registration.softwareVersion ? { software_version: registration.softwareVersion } : {}),
    }
  }

  async client(clientId: string): Promise<RegisteredClient | null> {
    if (!/^[0-9a-f-]{36}$/.test(clientId)) return null
    const { state } = await this.handler.load(oauthClientStream.of(clientId), oauthClientDecider)
    return state.registered ? state : null
  }

  // ---- authorization endpoint -----------------------------------------------------------------

  /** The checks of RFC 6749 section 4.1.1, OAuth 2.1 (PKCE S256 required) and RFC 8707. */
  async checkAuthorizationRequest(q: AuthorizationRequest): Promise<CheckedAuthorization> {
    const client = q.client_id ? await this.client(q.client_id) : null
    if (!client) return { ok: false, error: 'invalid_client', description: 'Unknown client: the application asking for access is not registered here.' }
    const redirectUri = q.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : undefined)
    if (!redirectUri || !client.redirectUris.some((registered) => redirectUriMatches(registered, redirectUri))) {
      return { ok: false, error: 'invalid_request', description: 'The redirect_uri is missing or is not one the application registered.' }
    }
    const refused = (error: string, description: string) => ({ ok: false as const, error, description })
    if (q.response_type !== 'code') return refused('unsupported_response_type', 'Only response_type=code is supported.')
    if (!q.code_challenge) return refused('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.')
    if (q.code_challenge_method !== 'S256') {
      return refused('invalid_request', `code_challenge_method must be S256${q.code_challenge_method ? `; ${q.code_challenge_method} is refused` : ' (plain, the default, is refused)'}.`)
    }
    if (!isS256Challenge(q.code_challenge)) return refused('invalid_request', 'code_challenge must be the 43-character base64url SHA-256 of the code_verifier.')
    const scope = q.scope ? scopeList(q.scope).join(' ') : client.scope
    const unknown = unknownScopes(scope)
    if (unknown.length > 0 || !scope) return refused('invalid_scope', `Unknown scope: ${unknown.join(' ')}. Supported: ${DEFAULT_SCOPE}.`)
    const resource = q.resource === undefined ? this.config.resources[0]! : this.config.resources.find((r) => trimSlash(r) === trimSlash(q.resource!))
    if (!resource) return refused('invalid_target', `resource must be one of ${this.config.resources.join(', ')}.`)
    return { ok: true, request: { client, redirectUri, redirectUriGiven: q.redirect_uri !== undefined, codeChallenge: q.code_challenge, scope, resource, state: q.state ?? null } }
  }

  /** The redirect back to the client, with `iss` (RFC 9207) so it can tell authorization servers apart. */
  redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
    const u = new URL(redirectUri)
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) u.searchParams.set(k, v)
    u.searchParams.set('iss', this.config.issuer)
    return u.href
  }

  async hasConsent(accountId: string, clientId: string, scope: string): Promise<boolean> {
    const { state } = await this.handler.load(oauthConsentStream.of(accountId), oauthConsentDecider)
    return consentCovers(state, clientId, scope)
  }

  async accountName(accountId: string): Promise<string | null> {
    const { state } = await this.handler.load(accountStream.of(accountId), accountDecider)
    return state.opened ? state.name : null
  }

  /** Whether a consent-page sign-in with API key `keyId` still stands: the key is live and the account's. */
  async signedIn(accountId: string, keyId: string): Promise<boolean> {
    if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(keyId)) return false
    const { state } = await this.handler.load(apiKeyStream.of(keyId), apiKeyDecider)
    return state.status === 'active' && state.accountId === accountId
  }

  /** The user approved (`approvedBy`): remember the consent for this client, open a grant, hand out its code. */
  async approve(accountId: string, req: ValidAuthorization, approvedBy: GrantApprover): Promise<{ redirect: string; grantId: string }> {
    const now = this.now()
    await this.handler.handle(oauthConsentStream.of(accountId), { type: 'GiveConsent', accountId, clientId: req.client.clientId, scope: req.scope, now }, oauthConsentDecider)
    const grantId = randomUUID()
    const secret = newSecret()
    await this.handler.handle(
      oauthGrantStream.of(grantId),
      {
        type: 'GrantAuthorization',
        grantId,
        clientId: req.client.clientId,
        accountId,
        scope: req.scope,
        resource: req.resource,
        redirectUri: req.redirectUri,
        redirectUriGiven: req.redirectUriGiven,
        codeChallenge: req.codeChallenge,
        codeHash: hashTokenSecret(secret),
        approvedBy,
        now,
      },
      oauthGrantDecider,
    )
    return { grantId, redirect: this.redirectWith(req.redirectUri, { code: formatToken('code', grantId, secret), state: req.state }) }
  }

  deny(req: ValidAuthorization): string {
    return this.redirectWith(req.redirectUri, { error: 'access_denied', error_description: 'The user declined.', state: req.state })
  }

  // ---- token endpoint ---------------------------------------------------------------------------

  async token(form: TokenRequest, presented: PresentedClient): Promise<TokenResponse> {
    if (!form.grant_type) throw new OAuthError('invalid_request', 'grant_type is required.')
    if (form.grant_type !== 'authorization_code' && form.grant_type !== 'refresh_token') {
      throw new OAuthError('unsupported_grant_type', 'Supported grant types: authorization_code, refresh_token.')
    }
    const client = await this.authenticateClient(presented)
    if (!client.grantTypes.includes(form.grant_type)) throw new OAuthError('unauthorized_client', `This client did not register the ${form.grant_type} grant.`)
    return form.grant_type === 'authorization_code' ? this.redeemCode(client, form) : this.refresh(client, form)
  }

  private async redeemCode(client: RegisteredClient, form: TokenRequest): Promise<TokenResponse> {
    if (!form.code) throw new OAuthError('invalid_request', 'code is required.')
    if (!form.code_verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE).')
    const code = parseToken('code', form.code)
    if (!code) throw new OAuthError('invalid_grant', 'The authorization code is not valid.')
    await this.endIfApproverRevoked(code.grantId)
    const access = newSecret()
    const refresh = client.grantTypes.includes('refresh_token') ? newSecret() : null
    const now = this.now()
    const r = await this.handler.handle(
      oauthGrantStream.of(code.grantId),
      {
        type: 'RedeemCode',
        clientId: client.clientId,
        codeHash: hashTokenSecret(code.secret),
        codeVerifier: form.code_verifier,
        redirectUri: form.redirect_uri ?? null,
        resource: this.resourceParam(form.resource),
        accessTokenHash: hashTokenSecret(access),
        refreshTokenHash: refresh ? hashTokenSecret(refresh) : null,
        now,
      },
      oauthGrantDecider,
    )
    this.refuseIfRevoked(r.events, 'This authorization code was already used: every token issued from it is revoked. Authorize again.')
    return this.tokenResponse(code.grantId, r.state, access, refresh, now)
  }

  private async refresh(client: RegisteredClient, form: TokenRequest): Promise<TokenResponse> {
    if (!form.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required.')
    const presented = parseToken('refresh', form.refresh_token)
    if (!presented) throw new OAuthError('invalid_grant', 'The refresh token is not valid.')
    await this.endIfApproverRevoked(presented.grantId)
    if (form.scope) {
      const { state } = await this.handler.load(oauthGrantStream.of(presented.grantId), oauthGrantDecider)
      if (state.status !== 'none' && scopeList(form.scope).some((s) => !scopeList(state.scope).includes(s))) throw new OAuthError('invalid_scope', 'A refresh cannot widen the scope.')
    }
    const access = newSecret()
    const refresh = newSecret()
    const now = this.now()
    const r = await this.handler.handle(
      oauthGrantStream.of(presented.grantId),
      {
        type: 'RefreshTokens',
        clientId: client.clientId,
        refreshTokenHash: hashTokenSecret(presented.secret),
        accessTokenHash: hashTokenSecret(access),
        newRefreshTokenHash: hashTokenSecret(refresh),
        resource: this.resourceParam(form.resource),
        now,
      },
      oauthGrantDecider,
    )
    this.refuseIfRevoked(r.events, 'This refresh token was already used (refresh tokens rotate): the authorization is revoked. Authorize again.')
    return this.tokenResponse(presented.grantId, r.state, access, refresh, now)
  }

  private resourceParam(resource: string | undefined): string | null {
    if (resource === undefined) return null
    const known = this.config.resources.find((r) => trimSlash(r) === trimSlash(resource))
    if (!known) throw new OAuthError('invalid_target', `resource must be one of ${this.config.resources.join(', ')}.`)
    return known
  }

  /**
   * A grant approved with an API key ends with that key. The key's revocation revokes such grants
   * by events (OAuthGrants.revokeApprovedByKey); this check makes it hold from the very moment the
   * key is revoked, in every process, and records the revocation if it was missed.
   */
  private async approverRevoked(g: { accountId: string; approvedBy: GrantApprover | null }): Promise<boolean> {
    if (g.approvedBy?.kind !== 'api_key') return false
    const { state } = await this.handler.load(apiKeyStream.of(g.approvedBy.keyId), apiKeyDecider)
    return !(state.status === 'active' && state.accountId === g.accountId)
  }

  private async endIfApproverRevoked(grantId: string) {
    const { state } = await this.handler.load(oauthGrantStream.of(grantId), oauthGrantDecider)
    if (state.status !== 'active' || !(await this.approverRevoked(state))) return
    await this.handler.handle(oauthGrantStream.of(grantId), { type: 'RevokeGrant', reason: 'api_key_revoked', now: this.now() }, oauthGrantDecider)
    throw new OAuthError('invalid_grant', 'The API key that approved this authorization was revoked; authorize again.')
  }

  private refuseIfRevoked(events: OAuthGrantEvent[], why: string) {
    if (events.some((e) => e.type === 'OAuthGrantRevoked')) throw new OAuthError('invalid_grant', why)
  }

  /** `expires_in` counts from the moment of issue (`issuedAt`), the same instant the expiry was computed from. */
  private tokenResponse(grantId: string, state: OAuthGrantState, access: string, refresh: string | null, issuedAt: string): TokenResponse {
    if (state.status !== 'active' || !state.access) throw new OAuthError('invalid_grant', 'The authorization is no longer active.')
    return {
      access_token: formatToken('access', grantId, access),
      token_type: 'Bearer',
      expires_in: Math.max(0, Math.round((Date.parse(state.access.expiresAt) - Date.parse(issuedAt)) / 1000)),
      ...(refresh ? { refresh_token: formatToken('refresh', grantId, refresh) } : {}),
      scope: state.scope,
    }
  }

  /** Client authentication at the token and revocation endpoints (RFC 6749 section 2.3). */
  private async authenticateClient(p: PresentedClient): Promise<RegisteredClient> {
    const method: TokenEndpointAuthMethod = p.basic ? 'client_secret_basic' : p.clientSecret !== undefined ? 'client_secret_post' : 'none'
    const clientId = p.basic?.clientId ?? p.clientId
    if (p.basic && p.clientId !== undefined && p.clientId !== p.basic.clientId) throw new OAuthError('invalid_request', 'client_id differs from the one in the Authorization header.')
    const client = clientId ? await this.client(clientId) : null
    if (!client) throw new OAuthError('invalid_client', 'Unknown client.')
    if (client.tokenEndpointAuthMethod !== method) throw new OAuthError('invalid_client', `This client authenticates with ${client.tokenEndpointAuthMethod}.`)
    if (method !== 'none') {
      const secret = p.basic?.secret ?? p.clientSecret ?? ''
      if (!sameHash(hashTokenSecret(secret), client.clientSecretHash)) throw new OAuthError('invalid_client', 'Client authentication failed.')
    }
    return client
  }

  // ---- revocation (RFC 7009) ---------------------------------------------------------------------

  /** Revokes the whole grant behind an access or refresh token. Unknown tokens are not an error. */
  async revoke(form: RevocationRequest, presented: PresentedClient): Promise<void> {
    const client = await this.authenticateClient(presented)
    if (!form.token) throw new OAuthError('invalid_request', 'token is required.')
    const parsed = parseToken('refresh', form.token) ?? parseToken('access', form.token)
    if (!parsed) return
    const { state } = await this.handler.load(oauthGrantStream.of(parsed.grantId), oauthGrantDecider)
    if (state.status !== 'active' || state.clientId !== client.clientId) return
    const hash = hashTokenSecret(parsed.secret)
    const known = sameHash(state.access?.hash, hash) || sameHash(state.refresh?.hash, hash) || state.retiredRefreshHashes.some((h) => sameHash(h, hash))
    if (!known) return
    await this.handler.handle(oauthGrantStream.of(parsed.grantId), { type: 'RevokeGrant', reason: 'revoked_by_client', now: this.now() }, oauthGrantDecider)
  }

  // ---- the account's own revocation (dashboard) ------------------------------------------------

  /** Withdraws the account's approval of a client: its next authorization shows the consent screen again. */
  async withdrawConsent(accountId: string, clientId: string): Promise<number | null> {
    const r = await this.handler.handle(oauthConsentStream.of(accountId), { type: 'WithdrawConsent', accountId, clientId, now: this.now() }, oauthConsentDecider)
    return r.position
  }

  /** Revokes one of the account's grants (every token issued under it stops working at once). */
  async revokeGrantOf(accountId: string, grantId: string): Promise<number | null> {
    const { state } = await this.handler.load(oauthGrantStream.of(grantId), oauthGrantDecider)
    if (state.status !== 'active' || state.accountId !== accountId) return null
    const r = await this.handler.handle(oauthGrantStream.of(grantId), { type: 'RevokeGrant', reason: 'revoked_by_user', now: this.now() }, oauthGrantDecider)
    return r.position
  }

  // ---- resource server side ---------------------------------------------------------------------

  /** The caller behind an access token, or null: unknown, expired, rotated away, revoked, or past the 90 days. The edge checks `resource`. */
  async authenticateAccessToken(token: string): Promise<OAuthCaller | null> {
    const parsed = parseToken('access', token)
    if (!parsed) return null
    const { state } = await this.handler.load(oauthGrantStream.of(parsed.grantId), oauthGrantDecider)
    const grant = accessTokenOwner(state, hashTokenSecret(parsed.secret), this.now())
    if (!grant || (await this.approverRevoked(grant))) return null
    const { state: ledger } = await this.credits.state(grant.accountId)
    if (!ledger.opened) return null
    return { accountId: grant.accountId, plan: ledger.plan, grantId: grant.grantId, clientId: grant.clientId, scope: grant.scope, resource: grant.resource }
  }
}
