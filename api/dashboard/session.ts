// The dashboard's sign-in cookie and CSRF protection.
//
// Session cookie: `<sessionId>.<secret>` (commands/persons.ts keeps only the secret's hash),
// HttpOnly, SameSite=Lax (so the top-level navigation an AI client starts to /oauth/authorize
// still carries it), Path=/, Max-Age = the session's remaining life, and Secure whenever the
// service is reached over https (PUBLIC_BASE_URL https, or DASHBOARD_COOKIE_SECURE=1), then
// also under the `__Host-` prefix. On plain-http localhost it goes without Secure, or browsers
// would not send it back.
//
// Not signed: the value is itself a 256-bit secret checked against its hash on every request, so
// a signature would add nothing, and clients (the suite too) read the token from the cookie as
// is. The pre-session cookie is signed with @fastify/cookie (api/http/cookies.ts).
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
import { cookieSigner, setCookie, unsignedCookie, type CookieSigner } from '../http/cookies.ts'

export const CSRF_HEADER = 'x-csrf-token'
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface DashboardCookies {
  session: string
  preSession: string
  secure: boolean
}

export const cookieNames = (secure: boolean): DashboardCookies =>
  secure ? { session: '__Host-notes_session', preSession: '__Host-notes_presession', secure } : { session: 'notes_session', preSession: 'notes_presession', secure }

const perServices = new WeakMap<Application, DashboardSessions>()
/** One per service instance: the dashboard and the OAuth consent page read the same sessions. */
export function dashboardSessionsOf(app: Application): DashboardSessions {
  let d = perServices.get(app)
  if (!d) perServices.set(app, (d = new DashboardSessions(app)))
  return d
}

export class DashboardSessions {
  readonly cookies: DashboardCookies
  /** The CSRF tokens' HMAC (tokens in a header, not cookies). */
  private readonly signer: Signer
  /** The cookies' signatures (@fastify/cookie). */
  readonly cookieSigner: CookieSigner
  private readonly origins: Set<string>

  constructor(private readonly app: Application) {
    this.cookies = cookieNames(app.settings.dashboard.secureCookies)
    this.signer = new Signer(app.settings.secrets.dashboard)
    this.cookieSigner = cookieSigner(app.settings.secrets.dashboard)
    this.origins = new Set([new URL(app.settings.publicBaseUrl).origin])
  }

  /** The session cookie's value, if any. */
  token(req: FastifyRequest): string | undefined {
    return req.cookies[this.cookies.session]
  }

  private set(reply: FastifyReply, name: string, value: string, maxAgeSeconds: number, sameSite: 'Lax' | 'Strict', signed: boolean) {
    setCookie(reply, name, value !== '' && signed ? this.cookieSigner.sign(value) : value, { path: '/', maxAgeSeconds, sameSite, secure: this.cookies.secure })
  }

  /** The signed-in person of this request, or null. Reads the cookie only: an Authorization header is never a dashboard credential. */
  authenticate(req: FastifyRequest): Promise<DashboardAuth | null> {
    const token = this.token(req)
    return token ? this.app.persons.authenticate(token) : Promise.resolve(null)
  }

  csrfFor(sessionId: string): string {
    return this.signer.mac('dashboard-csrf', sessionId)
  }

  /** The anonymous token of the sign-in form, bound to a pre-session cookie (set here when missing). */
  preSessionCsrf(req: FastifyRequest, reply: FastifyReply): string {
    let value = unsignedCookie(this.cookieSigner, req.cookies[this.cookies.preSession])
    if (!value || !/^[A-Za-z0-9_-]{43}$/.test(value)) {
      value = randomBytes(32).toString('base64url')
      this.set(reply, this.cookies.preSession, value, 3600, 'Strict', true)
    }
    return this.signer.mac('dashboard-presession', value)
  }

  /** Refuses a state-changing request from another site, or without the token of this session (or of the sign-in form). */
  checkCsrf(req: FastifyRequest, auth: Pick<DashboardAuth, 'sessionId'> | null): void {
    if (!UNSAFE.has(req.method)) return
    this.checkSameSite(req)
    const given = req.headers[CSRF_HEADER]
    if (typeof given !== 'string' || given.length === 0) throw new DomainError('csrf_check_failed', `Send the X-CSRF-Token header (from GET /app/api/session).`)
    const ok = auth
      ? this.signer.matches(given, 'dashboard-csrf', auth.sessionId)
      : (() => {
          const pre = unsignedCookie(this.cookieSigner, req.cookies[this.cookies.preSession])
          return !!pre && this.signer.matches(given, 'dashboard-presession', pre)
        })()
    if (!ok) throw new DomainError('csrf_check_failed', 'The CSRF token does not match this session; reload the page.')
  }

  /**
   * Refuses a request another site started (its Origin, or Sec-Fetch-Site). Every change, and a
   * GET that spends credits (a cross-site link or image could otherwise spend them), pass here.
   */
  checkSameSite(req: FastifyRequest): void {
    const origin = req.headers.origin
    if (origin !== undefined && !this.sameOrigin(req, origin)) throw new DomainError('csrf_check_failed', `Requests from ${origin} are not accepted here.`)
    const site = req.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin' && site !== 'none') throw new DomainError('csrf_check_failed', 'Cross-site requests are not accepted here.')
  }

  private sameOrigin(req: FastifyRequest, origin: string): boolean {
    if (this.origins.has(origin)) return true
    // Behind a proxy that keeps the Host header, or reached by another name than PUBLIC_BASE_URL.
    const host = req.headers.host
    return !!host && (origin === `http://${host}` || origin === `https://${host}`)
  }

  startSession(reply: FastifyReply, token: string, expiresAt: string) {
    this.set(reply, this.cookies.session, token, (Date.parse(expiresAt) - Date.now()) / 1000, 'Lax', false)
    // The pre-session cookie has done its job.
    this.set(reply, this.cookies.preSession, '', 0, 'Strict', true)
  }

  endSession(reply: FastifyReply) {
    this.set(reply, this.cookies.session, '', 0, 'Lax', false)
  }

  /** Whether the cookie is shaped like a session token at all (to tell "signed out" from "never signed in"). */
  hasSessionCookie(req: FastifyRequest): boolean {
    return parseSessionToken(this.token(req)) !== null
  }
}
