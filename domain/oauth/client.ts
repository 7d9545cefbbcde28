// An OAuth client registered through dynamic client registration (RFC 7591), stream
// `oauthclient-<clientId>`. Public clients (`none`, what AI desktop apps are) prove themselves
// with PKCE alone; confidential ones also get a secret, stored only as its SHA-256.
import type { Decider, DomainEvent } from '../decider.ts'
import { OAuthError } from './errors.ts'
import { streamKind } from '../streams.ts'

export const oauthClientStream = streamKind('oauthclient')

export const TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number]
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const
export type GrantType = (typeof GRANT_TYPES)[number]

export type ClientRegistration = {
  clientId: string
  clientName: string | null
  clientUri: string | null
  redirectUris: string[]
  grantTypes: GrantType[]
  scope: string
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  clientSecretHash: string | null
  softwareId: string | null
  softwareVersion: string | null
}

export type OAuthClientRegistered = DomainEvent<'OAuthClientRegistered', ClientRegistration & { at: string }>
export type OAuthClientEvent = OAuthClientRegistered

export type OAuthClientCommand = { type: 'RegisterClient'; registration: ClientRegistration; now: string }

export type OAuthClientState = { registered: false } | ({ registered: true; registeredAt: string } & ClientRegistration)

// Schemes a browser must never be sent to with a code in the URL.
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:', 'ftp:', 'ws:', 'wss:'])
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Why a redirect URI is refused, or null (OAuth 2.1 section 2.3.1 and RFC 8252): https anywhere,
 * http only to the loopback interface (native apps listening locally), or a private-use scheme
 * (`com.example.app:/callback`); never a fragment, never a dangerous scheme.
 */
export function redirectUriProblem(uri: string): string | null {
  let u: URL
  try {
    u = new URL(uri)
  } catch {
    return `${JSON.stringify(uri)} is not an absolute URI`
  }
  if (uri.length > 2000) return 'redirect URIs are limited to 2000 characters'
  if (u.hash || uri.includes('#')) return `${uri} has a fragment; redirect URIs must not`
  if (FORBIDDEN_SCHEMES.has(u.protocol)) return `the ${u.protocol} scheme is not allowed for redirect URIs`
  if (u.protocol === 'http:' && !LOOPBACK.has(u.hostname)) return `${uri}: plain http is allowed only for loopback addresses (localhost, 127.0.0.1, [::1])`
  if (u.username || u.password) return `${uri} carries credentials`
  return null
}

/**
 * Whether a redirect URI presented at the authorization endpoint is the registered one: equal,
 * except that for http on the loopback interface any port matches (RFC 8252 section 7.3: native
 * apps listen on a port the OS picks at the moment of the request). The presented URI must be
 * written as the URL parser writes it, so no second spelling of a registered URI gets through.
 */
export function redirectUriMatches(registered: string, presented: string): boolean {
  if (registered === presented) return true
  let r: URL
  let p: URL
  try {
    r = new URL(registered)
    p = new URL(presented)
  } catch {
    return false
  }
  if (p.href !== presented || r.protocol !== 'http:' || p.protocol !== 'http:' || !LOOPBACK.has(r.hostname)) return false
  p.port = r.port
  return p.href === r.href
}

export const oauthClientDecider: Decider<OAuthClientCommand, OAuthClientEvent, OAuthClientState> = {
  initialState: () => ({ registered: false }),
  evolve(_s, e) {
    const { at, ...registration } = e.data
    return { registered: true, registeredAt: at, ...registration }
  },
  decide(c, s) {
    // Client ids are fresh random UUIDs: a second registration with one is a retried request.
    if (s.registered) return []
    const r = c.registration
    if (r.redirectUris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris needs at least one URI')
    for (const uri of r.redirectUris) {
      const problem = redirectUriProblem(uri)
      if (problem) throw new OAuthError('invalid_redirect_uri', problem)
    }
    if ((r.tokenEndpointAuthMethod === 'none') !== (r.clientSecretHash === null)) {
      throw new OAuthError('invalid_client_metadata', 'a secret goes with client_secret_post or client_secret_basic, and only with them')
    }
    return [{ type: 'OAuthClientRegistered', data: { ...r, at: c.now } }]
  },
}
