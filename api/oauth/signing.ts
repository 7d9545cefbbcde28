// The consent page's CSRF token and its API-key sign-in cookie. The CSRF token is an HMAC (with
// the deployment's OAuth signing secret) bound to a random cookie (double submit,
// SameSite=Strict) and to the authorization request it was shown for: a token in a form field,
// not a cookie, so it stays a MAC here. The cookies themselves are signed by @fastify/cookie
// (api/http/cookies.ts); the sign-in cookie carries its own expiry, checked on every read.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { unsignedCookie, type CookieSigner } from '../http/cookies.ts'

export const CSRF_COOKIE = 'oauth_csrf'
export const SESSION_COOKIE = 'oauth_session'
/** How long a sign-in on the consent page is remembered in this browser. */
export const SESSION_SECONDS = 12 * 60 * 60

export class Signer {
  constructor(private readonly secret: string) {}

  mac(...parts: string[]): string {
    return createHmac('sha256', this.secret).update(parts.join('\n')).digest('base64url')
  }

  matches(mac: string, ...parts: string[]): boolean {
    const a = Buffer.from(mac)
    const b = Buffer.from(this.mac(...parts))
    return a.length === b.length && timingSafeEqual(a, b)
  }

  csrfToken(cookie: string, clientId: string, codeChallenge: string) {
    return this.mac('csrf', cookie, clientId, codeChallenge)
  }
}

/** The sign-in cookie's value before signing: who, and until when. */
export function consentSession(accountId: string, keyId: string, nowMs: number): string {
  return `${accountId}.${keyId}.${Math.floor(nowMs / 1000) + SESSION_SECONDS}`
}

/** The signed-in account, when the cookie is ours (signature) and not expired. */
export function readConsentSession(signer: CookieSigner, raw: string | undefined, nowMs: number): { accountId: string; keyId: string } | null {
  const [accountId, keyId, exp, ...rest] = (unsignedCookie(signer, raw) ?? '').split('.')
  if (!accountId || !keyId || !exp || rest.length > 0 || !/^\d+$/.test(exp)) return null
  if (Number(exp) * 1000 <= nowMs) return null
  return { accountId, keyId }
}

export const randomCookieValue = () => randomBytes(32).toString('base64url')
