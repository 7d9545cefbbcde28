// The dashboard's sign-in cookie and CSRF protection.
//
// Session cookie: `<sessionId>.<secret>` (commands/persons.ts keeps only the secret's hash),
// HttpOnly, SameSite=Lax (so the top-level navigation an AI client starts to /oauth/authorize
// still carries it), Path=/, Max-Age = the session's remaining life, and Secure whenever the
// service is reached over https (PUBLIC_BASE_URL https, or DASHBOARD_COOKIE_SECURE=1), then
// also under the `__Host-` prefix. On plain-http localhost it goes without Secure, or browsers
// would not send it back.
//
// CSRF: every POST, PUT, PATCH and DELETE under /app/api carries `X-CSRF-Token`, an HMAC of the
// session id (signed in) or of a random pre-session cookie (the sign-in form itself, against
// login CSRF), which only a page of our own origin can read from GET /app/api/session. A forged
// cross-site form cannot set the header; a cross-site script cannot read the token. A request
// whose Origin (or Sec-Fetch-Site) names another site is refused as well.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { randomBytes } from 'node:crypto'
import { DomainError } from '../../domain/errors.ts'
import { parseSessionToken } from '../../domain/accounts/session.ts'
import type { Application } from '../../commands/application.ts'
import type { DashboardAuth } from '../../commands/persons.ts'
import { Signer } from '../oauth/signing.ts'

export const CSRF_HEADER = 'x-csrf-token'
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface DashboardCookies {
  session: string
  preSession: string
  secure: boolean
}

export const cookieNames = (secure: boolean): DashboardCookies =>
  secure ? { session: '__Host-notes_session', preSession: '__Host-notes_presession', secure } : { session: 'notes_session', preSession: 'notes_presession', secure }

// fastify adds each `set-cookie` header to the ones already set (re-sending those sent a cookie twice).
export function setCookie(reply: FastifyReply, name: string, value: string, o: { maxAgeSeconds: number; sameSite: 'Lax' | 'Strict'; secure: boolean }) {
  reply.header('set-cookie', `${name}=${encodeURIComponent(value)}; Path=/; Max-Age=${Math.max(0, Math.floor(o.maxAgeSeconds))}; HttpOnly; SameSite=${o.sameSite}${o.secure ? '; Secure' : ''}`)
}

const perServices = new WeakMap<Application, DashboardSessions>()
/** One per service instance: the dashboard and the OAuth consent page read the same sessions. */
export function dashboardSessionsOf(s: Application): DashboardSessions {
  let d = perServices.get(s)
  if (!d) perServices.set(s, (d = new DashboardSessions(s)))
  return d
}

export class DashboardSessions {
  readonly cookies: DashboardCookies
  private readonly signer: Signer
  private readonly origins: Set<string>

  constructor(private readonly s: Application) {
    this.cookies = cookieNames(s.settings.dashboard.secureCookies)
    this.signer = new Signer(s.settings.secrets.dashboard)
    this.origins = new Set([new URL(s.settings.publicBaseUrl).origin])
  }

  /** The session cookie's value, if any. */
  token(req: FastifyRequest): string | undefined {
    return req.cookies[this.cookies.session]
  }

  /** The signed-in person of this request, or null. Reads the cookie only: an Authorization header is never a dashboard credential. */
  authenticate(req: FastifyRequest): Promise<DashboardAuth | null> {
    const token = this.token(req)
    return token ? this.s.persons.authenticate(token) : Promise.resolve(null)
  }

  csrfFor(sessionId: string): string {
    return this.signer.mac('dashboard-csrf', sessionId)
  }

  /** The anonymous token of the sign-in form, bound to a pre-session cookie (set here when missing). */
  preSessionCsrf(req: FastifyRequest, reply: FastifyReply): string {
    let value = req.cookies[this.cookies.preSession]
    if (!value || !/^[A-Za-z0-9_-]{43}$/.test(value)) {
      value = randomBytes(32).toString('base64url')
      setCookie(reply, this.cookies.preSession, value, { maxAgeSeconds: 3600, sameSite: 'Strict', secure: this.cookies.secure })
    }
    return this.signer.mac('dashboard-presession', value)
  }

  /** Refuses a state-changing request from another site, or without the token of this session (or of the sign-in form). */
  checkCsrf(req: FastifyRequest, auth: Pick<DashboardAuth, 'sessionId'> | null): void {
    if (!UNSAFE.has(req.method)) return
    const origin = req.headers.origin
    if (origin !== undefined && !this.sameOrigin(req, origin)) throw new DomainError('csrf_check_failed', `Requests from ${origin} are not accepted here.`)
    const site = req.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin' && site !== 'none') throw new DomainError('csrf_check_failed', 'Cross-site requests are not accepted here.')
    const given = req.headers[CSRF_HEADER]
    if (typeof given !== 'string' || given.length === 0) throw new DomainError('csrf_check_failed', `Send the X-CSRF-Token header (from GET /app/api/session).`)
    const ok = auth
      ? this.signer.matches(given, 'dashboard-csrf', auth.sessionId)
      : (() => {
          const pre = req.cookies[this.cookies.preSession]
          return !!pre && this.signer.matches(given, 'dashboard-presession', pre)
        })()
    if (!ok) throw new DomainError('csrf_check_failed', 'The CSRF token does not match this session; reload the page.')
  }

  private sameOrigin(req: FastifyRequest, origin: string): boolean {
    if (this.origins.has(origin)) return true
    // Behind a proxy that keeps the Host header, or reached by another name than PUBLIC_BASE_URL.
    const host = req.headers.host
    return !!host && (origin === `http://${host}` || origin === `https://${host}`)
  }

  startSession(reply: FastifyReply, token: string, expiresAt: string) {
    setCookie(reply, this.cookies.session, token, { maxAgeSeconds: (Date.parse(expiresAt) - Date.now()) / 1000, sameSite: 'Lax', secure: this.cookies.secure })
    // The pre-session cookie has done its job.
    setCookie(reply, this.cookies.preSession, '', { maxAgeSeconds: 0, sameSite: 'Strict', secure: this.cookies.secure })
  }

  endSession(reply: FastifyReply) {
    setCookie(reply, this.cookies.session, '', { maxAgeSeconds: 0, sameSite: 'Lax', secure: this.cookies.secure })
  }

  /** Whether the cookie is shaped like a session token at all (to tell "signed out" from "never signed in"). */
  hasSessionCookie(req: FastifyRequest): boolean {
    return parseSessionToken(this.token(req)) !== null
  }
}
