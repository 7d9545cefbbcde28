// The consent page's CSRF token and sign-in cookie, both HMAC-signed with the deployment's OAuth
// signing secret. The CSRF token is bound to a random cookie (double submit, SameSite=Strict)
// and to the authorization request it was shown for.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

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

  session(accountId: string, keyId: string, nowMs: number): string {
    const exp = Math.floor(nowMs / 1000) + SESSION_SECONDS
    return `${accountId}.${keyId}.${exp}.${this.mac('session', accountId, keyId, String(exp))}`
  }

  /** The signed-in account, when the cookie is ours and not expired. */
  readSession(value: string | undefined, nowMs: number): { accountId: string; keyId: string } | null {
    const [accountId, keyId, exp, mac, ...rest] = (value ?? '').split('.')
    if (!accountId || !keyId || !exp || !mac || rest.length > 0) return null
    if (!this.matches(mac, 'session', accountId, keyId, exp)) return null
    if (Number(exp) * 1000 <= nowMs) return null
    return { accountId, keyId }
  }
}

export const randomCookieValue = () => randomBytes(32).toString('base64url')

export function cookie(name: string, value: string, o: { maxAgeSeconds: number; sameSite: 'Strict' | 'Lax'; secure: boolean }) {
  return `${name}=${encodeURIComponent(value)}; Path=/oauth; Max-Age=${o.maxAgeSeconds}; HttpOnly; SameSite=${o.sameSite}${o.secure ? '; Secure' : ''}`
}
