// What the OAuth tests act with: PKCE pairs, a user agent with a cookie jar (the person at the
// consent page), and the consent form's hidden fields as the page renders them.
import { createHash, randomBytes } from 'node:crypto'

const b64 = (n = 32) => randomBytes(n).toString('base64url')

export function pkce() {
  const verifier = b64(48)
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

const unescapeHtml = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

/** A user agent with a cookie jar: what the person at the consent page uses. */
export class Browser {
  readonly cookies = new Map<string, string>()
  private header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }
  private keep(r: Response) {
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(';')
      const i = pair!.indexOf('=')
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1))
    }
    return r
  }
  async get(url: string | URL) {
    return this.keep(await fetch(url, { redirect: 'manual', headers: { cookie: this.header() } }))
  }
  async post(url: string, form: Record<string, string>) {
    return this.keep(await fetch(url, { method: 'POST', redirect: 'manual', headers: { cookie: this.header(), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) }))
  }
}

export const hiddenFields = (html: string) => Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescapeHtml(m[2]!)]))
