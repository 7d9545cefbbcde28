// One authorization of one client by one account, stream `oauthgrant-<grantId>`: from the
// user's approval (which issues the authorization code) through the code's redemption, every
// refresh, to its revocation. Tokens are rotated on every refresh; presenting a code twice, or
// a refresh token that was already rotated away, is a sign of theft and revokes the whole grant
// (OAuth 2.1 sections 4.1.3 and 4.3.1). Nothing outlives the hard expiry, 90 days after approval.
// A grant remembers who approved it: one approved with an API key ends with that key.
import type { Decider, DomainEvent } from '../decider.ts'
import { OAuthError } from './errors.ts'
import { OAUTH_LIFETIMES, sameHash, verifierMatches } from './tokens.ts'
import { streamKind } from '../streams.ts'

export const oauthGrantStream = streamKind('oauthgrant')

/**
 * `revoked_by_user`: the account's person revoked the client on the dashboard; `api_key_revoked`:
 * the API key that approved it was revoked; `revoked_by_admin`: the admin command.
 */
export const REVOCATION_REASONS = ['code_reuse', 'refresh_token_reuse', 'revoked_by_client', 'revoked_by_user', 'api_key_revoked', 'revoked_by_admin'] as const
export type RevocationReason = (typeof REVOCATION_REASONS)[number]

/** Who approved on the consent page: a person signed in to the dashboard, or the account's API key. */
export type GrantApprover = { kind: 'person'; personId: string } | { kind: 'api_key'; keyId: string }

type At = { at: string }
export type OAuthAuthorizationGranted = DomainEvent<
  'OAuthAuthorizationGranted',
  {
    grantId: string
    clientId: string
    accountId: string
    scope: string
    /** The MCP resource (RFC 8707) the tokens are for. */
    resource: string
    redirectUri: string
    /**
     * Whether the authorization request carried redirect_uri: then the token request must carry
     * the same (RFC 6749 section 4.1.3). Absent on grants recorded before: taken as true.
     */
    redirectUriGiven?: boolean
    codeChallenge: string
    codeHash: string
    codeExpiresAt: string
    /** Hard expiry of everything issued under this grant. */
    expiresAt: string
    /** Absent on grants recorded before approvers were. */
    approvedBy?: GrantApprover
  } & At
>
export type OAuthCodeRedeemed = DomainEvent<
  'OAuthCodeRedeemed',
  { accessTokenHash: string; accessExpiresAt: string; refreshTokenHash: string | null; refreshExpiresAt: string | null } & At
>
export type OAuthTokensRefreshed = DomainEvent<
  'OAuthTokensRefreshed',
  { previousRefreshTokenHash: string; accessTokenHash: string; accessExpiresAt: string; refreshTokenHash: string; refreshExpiresAt: string; refreshCount: number } & At
>
export type OAuthGrantRevoked = DomainEvent<'OAuthGrantRevoked', { reason: RevocationReason; at: string }>

export type OAuthGrantEvent = OAuthAuthorizationGranted | OAuthCodeRedeemed | OAuthTokensRefreshed | OAuthGrantRevoked

export type OAuthGrantCommand =
  | ({ type: 'GrantAuthorization' } & Omit<OAuthAuthorizationGranted['data'], 'at' | 'codeExpiresAt' | 'expiresAt' | 'approvedBy' | 'redirectUriGiven'> & {
      approvedBy: GrantApprover
      redirectUriGiven: boolean
      now: string
    })
  | {
      type: 'RedeemCode'
      clientId: string
      codeHash: string
      codeVerifier: string
      redirectUri: string | null
      resource: string | null
      accessTokenHash: string
      /** Null when the client did not register the refresh_token grant. */
      refreshTokenHash: string | null
      now: string
    }
  | { type: 'RefreshTokens'; clientId: string; refreshTokenHash: string; accessTokenHash: string; newRefreshTokenHash: string; resource: string | null; now: string }
  | { type: 'RevokeGrant'; reason: RevocationReason; now: string }

interface Issued {
  hash: string
  expiresAt: string
}

export type OAuthGrantState =
  | { status: 'none' }
  | {
      status: 'active' | 'revoked'
      grantId: string
      clientId: string
      accountId: string
      scope: string
      resource: string
      redirectUri: string
      redirectUriGiven: boolean
      codeChallenge: string
      codeHash: string
      codeExpiresAt: string
      codeRedeemed: boolean
      expiresAt: string
      access: Issued | null
      refresh: Issued | null
      /** Refresh tokens rotated away: presenting one again revokes the grant. */
      retiredRefreshHashes: readonly string[]
      refreshCount: number
      revokedReason: RevocationReason | null
      grantedAt: string
      approvedBy: GrantApprover | null
    }

type Existing = Extract<OAuthGrantState, { grantId: string }>

const plusSeconds = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString()
const earliest = (a: string, b: string) => (Date.parse(a) <= Date.parse(b) ? a : b)
const passed = (deadline: string, now: string) => Date.parse(now) >= Date.parse(deadline)

/** Same answer for unknown, foreign and revoked grants: the client learns nothing more than "no". */
const invalidGrant = (why: string) => new OAuthError('invalid_grant', why)

function live(s: OAuthGrantState, clientId: string): Existing {
  if (s.status === 'none' || s.clientId !== clientId) throw invalidGrant('The code or token is not valid for this client.')
  if (s.status === 'revoked') throw invalidGrant('This authorization was revoked; authorize again.')
  return s
}

export function evolveGrant(s: OAuthGrantState, e: OAuthGrantEvent): OAuthGrantState {
  if (e.type === 'OAuthAuthorizationGranted') {
    const { at, approvedBy, redirectUriGiven, ...d } = e.data
    return { status: 'active', ...d, approvedBy: approvedBy ?? null, redirectUriGiven: redirectUriGiven ?? true, codeRedeemed: false, access: null, refresh: null, retiredRefreshHashes: [], refreshCount: 0, revokedReason: null, grantedAt: at }
  }
  if (s.status === 'none') return s
  switch (e.type) {
    case 'OAuthCodeRedeemed':
      return {
        ...s,
        codeRedeemed: true,
        access: { hash: e.data.accessTokenHash, expiresAt: e.data.accessExpiresAt },
        refresh: e.data.refreshTokenHash && e.data.refreshExpiresAt ? { hash: e.data.refreshTokenHash, expiresAt: e.data.refreshExpiresAt } : null,
      }
    case 'OAuthTokensRefreshed':
      return {
        ...s,
        access: { hash: e.data.accessTokenHash, expiresAt: e.data.accessExpiresAt },
        refresh: { hash: e.data.refreshTokenHash, expiresAt: e.data.refreshExpiresAt },
        retiredRefreshHashes: [...s.retiredRefreshHashes, e.data.previousRefreshTokenHash],
        refreshCount: e.data.refreshCount,
      }
    case 'OAuthGrantRevoked':
      return { ...s, status: 'revoked', revokedReason: e.data.reason, access: null, refresh: null }
  }
}

export function decideGrant(c: OAuthGrantCommand, s: OAuthGrantState): OAuthGrantEvent[] {
  switch (c.type) {
    case 'GrantAuthorization': {
      if (s.status !== 'none') throw new OAuthError('invalid_request', 'This grant id is taken.')
      const { type: _, now, ...d } = c
      return [
        {
          type: 'OAuthAuthorizationGranted',
          data: { ...d, codeExpiresAt: plusSeconds(now, OAUTH_LIFETIMES.codeSeconds), expiresAt: plusSeconds(now, OAUTH_LIFETIMES.grantSeconds), at: now },
        },
      ]
    }
    case 'RedeemCode': {
      const g = live(s, c.clientId)
      if (!sameHash(g.codeHash, c.codeHash)) throw invalidGrant('The authorization code is not valid.')
      // A second presentation means the code leaked: nothing issued from it may keep working.
      if (g.codeRedeemed) return [{ type: 'OAuthGrantRevoked', data: { reason: 'code_reuse', at: c.now } }]
      if (passed(g.codeExpiresAt, c.now)) throw invalidGrant('The authorization code has expired; authorize again.')
      if (c.redirectUri === null && g.redirectUriGiven) throw new OAuthError('invalid_request', 'redirect_uri is required: the authorization request carried one (RFC 6749 section 4.1.3).')
      if (c.redirectUri !== null && c.redirectUri !== g.redirectUri) throw invalidGrant('redirect_uri differs from the one in the authorization request.')
      if (c.resource !== null && c.resource !== g.resource) throw new OAuthError('invalid_target', 'resource differs from the one in the authorization request.')
      if (!verifierMatches(c.codeVerifier, g.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge (PKCE S256).')
      const refreshExpiresAt = c.refreshTokenHash ? earliest(plusSeconds(c.now, OAUTH_LIFETIMES.refreshSeconds), g.expiresAt) : null
      return [
        {
          type: 'OAuthCodeRedeemed',
          data: {
            accessTokenHash: c.accessTokenHash,
            accessExpiresAt: earliest(plusSeconds(c.now, OAUTH_LIFETIMES.accessSeconds), g.expiresAt),
            refreshTokenHash: c.refreshTokenHash,
            refreshExpiresAt,
            at: c.now,
          },
        },
      ]
    }
    case 'RefreshTokens': {
      const g = live(s, c.clientId)
      if (g.retiredRefreshHashes.some((h) => sameHash(h, c.refreshTokenHash))) {
        return [{ type: 'OAuthGrantRevoked', data: { reason: 'refresh_token_reuse', at: c.now } }]
      }
      if (!g.refresh || !sameHash(g.refresh.hash, c.refreshTokenHash)) throw invalidGrant('The refresh token is not valid.')
      if (passed(g.expiresAt, c.now)) throw invalidGrant('This authorization reached its 90-day limit; authorize again.')
      if (passed(g.refresh.expiresAt, c.now)) throw invalidGrant('The refresh token has expired (30 days); authorize again.')
      if (c.resource !== null && c.resource !== g.resource) throw new OAuthError('invalid_target', 'resource differs from the one this authorization is for.')
      return [
        {
          type: 'OAuthTokensRefreshed',
          data: {
            previousRefreshTokenHash: g.refresh.hash,
            accessTokenHash: c.accessTokenHash,
            accessExpiresAt: earliest(plusSeconds(c.now, OAUTH_LIFETIMES.accessSeconds), g.expiresAt),
            refreshTokenHash: c.newRefreshTokenHash,
            refreshExpiresAt: earliest(plusSeconds(c.now, OAUTH_LIFETIMES.refreshSeconds), g.expiresAt),
            refreshCount: g.refreshCount + 1,
            at: c.now,
          },
        },
      ]
    }
    case 'RevokeGrant':
      if (s.status !== 'active') return []
      return [{ type: 'OAuthGrantRevoked', data: { reason: c.reason, at: c.now } }]
  }
}

export const oauthGrantDecider: Decider<OAuthGrantCommand, OAuthGrantEvent, OAuthGrantState> = {
  decide: decideGrant,
  evolve: evolveGrant,
  initialState: () => ({ status: 'none' }),
}

/** The account behind a live access token, or null (unknown, expired, rotated away, revoked). */
export function accessTokenOwner(s: OAuthGrantState, accessTokenHash: string, now: string): Existing | null {
  if (s.status !== 'active' || !s.access) return null
  if (!sameHash(s.access.hash, accessTokenHash)) return null
  if (passed(s.access.expiresAt, now) || passed(s.expiresAt, now)) return null
  return s
}
