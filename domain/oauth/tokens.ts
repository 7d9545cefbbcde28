// Token formats, lifetimes and PKCE (spec part 5: access 1 hour, refresh 30 days, hard expiry
// 90 days from the grant; PKCE S256 only). Every code and token carries the id of its grant, so
// checking one reads exactly one stream (`oauthgrant-<grantId>`), and only the SHA-256 of its
// random part is ever stored: 256 random bits make a fast hash as strong as a slow one.
import { createHash, timingSafeEqual } from 'node:crypto'

export const OAUTH_LIFETIMES = {
  /** Authorization codes: single use, short-lived (RFC 6749 section 4.1.2 advises at most 10 minutes). */
  codeSeconds: 10 * 60,
  accessSeconds: 60 * 60,
  refreshSeconds: 30 * 24 * 60 * 60,
  /** From the moment the user approved: no refresh goes beyond it. */
  grantSeconds: 90 * 24 * 60 * 60,
} as const

export type TokenKind = 'code' | 'access' | 'refresh'
const PREFIX: Record<TokenKind, string> = { code: 'oac', access: 'oat', refresh: 'ort' }
const SHAPE = /^(oac|oat|ort)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/

export const formatToken = (kind: TokenKind, grantId: string, secret: string) => `${PREFIX[kind]}_${grantId}_${secret}`

/** Null for anything that is not a token of that kind (an API key, a JWT, a typo). */
export function parseToken(kind: TokenKind, token: string): { grantId: string; secret: string } | null {
  const m = SHAPE.exec(token)
  if (!m || m[1] !== PREFIX[kind]) return null
  return { grantId: m[2]!, secret: m[3]! }
}

export const looksLikeAccessToken = (token: string) => token.startsWith(`${PREFIX.access}_`)

export const hashTokenSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex')

export function sameHash(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b || a.length !== b.length) return false
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'))
}

// ---- PKCE (RFC 7636) -----------------------------------------------------------------------

/** The only method accepted: `plain` would hand the verifier to whoever sees the request. */
export const PKCE_METHODS = ['S256'] as const

/** base64url of a SHA-256: exactly 43 characters. */
export const isS256Challenge = (s: string) => /^[A-Za-z0-9_-]{43}$/.test(s)
export const isCodeVerifier = (s: string) => /^[A-Za-z0-9\-._~]{43,128}$/.test(s)
export const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url')

export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!isCodeVerifier(verifier) || !isS256Challenge(challenge)) return false
  return timingSafeEqual(Buffer.from(s256(verifier)), Buffer.from(challenge))
}

// ---- scopes --------------------------------------------------------------------------------

/** One scope: everything the MCP tools do for the account (what an API key can do over MCP). */
export const OAUTH_SCOPES = ['mcp'] as const
export const DEFAULT_SCOPE = 'mcp'

export const scopeList = (scope: string | null | undefined): string[] => [...new Set((scope ?? '').split(' ').filter(Boolean))]
export const unknownScopes = (scope: string): string[] => scopeList(scope).filter((s) => !(OAUTH_SCOPES as readonly string[]).includes(s))
export const scopeCovers = (granted: string, wanted: string): boolean => scopeList(wanted).every((s) => scopeList(granted).includes(s))
