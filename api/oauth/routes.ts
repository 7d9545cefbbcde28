// The OAuth 2.1 authorization server on {base_url} (spec part 5; MCP authorization): metadata
// (RFC 8414), dynamic client registration (RFC 7591), the authorization endpoint with its
// consent page, the token endpoint (authorization_code with PKCE S256, refresh_token with
// rotation) and revocation (RFC 7009). Errors here are OAuth's `{ error, error_description }`,
// which OAuth clients parse, not the REST error body.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { Application } from '../../commands/application.ts'
import { isOAuthError, OAuthError } from '../../domain/oauth/errors.ts'
import type { GrantApprover } from '../../domain/oauth/grant.ts'
import { OAUTH_SCOPES, PKCE_METHODS } from '../../domain/oauth/tokens.ts'
import { TOKEN_ENDPOINT_AUTH_METHODS } from '../../domain/oauth/client.ts'
import type { PresentedClient, ValidAuthorization } from '../../commands/oauth.ts'
import { AuthorizationRequest, ClientRegistrationRequest, RevocationRequest, TokenRequest, type AuthorizationServerMetadata } from '../../contract/oauth.ts'
import { errorBody } from '../errors.ts'
import { isDomainError } from '../../domain/errors.ts'
import { sendDomainError } from '../http/errorHandling.ts'
import { countedLimits, counter, storeFor } from '../http/rateLimit.ts'
import { consentPage, declinedPage, errorPage } from './consentPage.ts'
import { CSRF_COOKIE, SESSION_COOKIE, SESSION_SECONDS, Signer, consentSession, randomCookieValue, readConsentSession } from './signing.ts'
import { cookieSigner, fastifyCookie, setCookie, unsignedCookie } from '../http/cookies.ts'
import { dashboardSessionsOf } from '../dashboard/session.ts'

export function authorizationServerMetadata(app: Application): AuthorizationServerMetadata {
  const base = app.settings.publicBaseUrl
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    code_challenge_methods_supported: [...PKCE_METHODS],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${base}/mcp/info`,
  }
}

/** The consent page's form: the authorization request it was shown for, plus the person's answer. */
const ConsentForm = AuthorizationRequest.extend({
  csrf: z.string().max(200).optional(),
  api_key: z.string().max(200).optional(),
  decision: z.enum(['approve', 'deny']).optional(),
})

/** `application/x-www-form-urlencoded` into an object; a repeated parameter is refused (RFC 6749 section 3.1). */
function parseForm(body: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of new URLSearchParams(body)) {
    if (k in out) throw new OAuthError('invalid_request', `The parameter ${k} is repeated.`)
    out[k] = v
  }
  return out
}

function parse<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }, value: unknown, code: 'invalid_request' | 'invalid_client_metadata'): T {
  const r = schema.safeParse(value ?? {})
  if (r.success) return r.data
  throw new OAuthError(code, r.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '))
}

/** Client credentials from HTTP Basic (RFC 6749 section 2.3.1: form-encoded id and secret) or the form. */
function presentedClient(req: FastifyRequest, form: { client_id?: string | undefined; client_secret?: string | undefined }): PresentedClient {
  const m = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(req.headers.authorization ?? '')
  let basic: PresentedClient['basic'] = null
  if (m) {
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8')
    const i = decoded.indexOf(':')
    if (i < 0) throw new OAuthError('invalid_client', 'Malformed Basic credentials.')
    basic = { clientId: decodeURIComponent(decoded.slice(0, i).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, ' ')) }
  }
  return { basic, clientId: form.client_id, clientSecret: form.client_secret }
}

function html(reply: FastifyReply, status: number, body: string) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
    .header('referrer-policy', 'no-referrer')
    .send(body)
}

/** Who approves in this browser: a dashboard person, or (fallback) the account's API key. */
interface Approver {
  accountId: string
  person: { name: string; email: string } | null
  approvedBy: GrantApprover
}

export function oauthRoutes(application: Application) {
  return async (app: FastifyInstance) => {
    const signer = new Signer(application.settings.secrets.oauth)
    const cookies = cookieSigner(application.settings.secrets.oauth)
    await app.register(fastifyCookie, { secret: cookies })
    const secure = application.settings.publicBaseUrl.startsWith('https:')
    // Registration is open to anyone (RFC 7591): counted per IP so it cannot be flooded; sign-in
    // attempts on the consent page likewise.
    // (@fastify/rate-limit counters, counted by the handlers.)
    await app.register(countedLimits, { store: storeFor(application, 'oauth') })
    const registrations = counter(app, { name: 'registrations', max: 30, windowSeconds: 3600, keyOf: (req) => req.ip })
    const signIns = counter(app, { name: 'sign-ins', max: 30, windowSeconds: 600, keyOf: (req) => req.ip })

    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      try {
        done(null, parseForm(body as string))
      } catch (err) {
        done(err as Error, undefined)
      }
    })

    app.setErrorHandler((err, req, reply) => {
      // The HTTP kit's refusals before the route (an Origin not allowed) keep the spec's body.
      if (isDomainError(err)) return sendDomainError(reply, err)
      if (isOAuthError(err)) {
        if (err.status === 401 && /^Basic/i.test(req.headers.authorization ?? '')) reply.header('WWW-Authenticate', 'Basic realm="oauth"')
        return reply.code(err.status).header('cache-control', 'no-store').send({ error: err.code, error_description: err.message })
      }
      const status = (err as { statusCode?: number }).statusCode ?? 500
      if (status >= 400 && status < 500) return reply.code(400).header('cache-control', 'no-store').send({ error: 'invalid_request', error_description: (err as Error).message })
      req.log.error({ err }, 'OAuth request failed')
      return reply.code(500).send({ error: 'server_error', error_description: 'Something went wrong on our side.' })
    })

    app.get('/.well-known/oauth-authorization-server', async () => authorizationServerMetadata(application))

    app.post('/oauth/register', async (req, reply) => {
      const hit = await registrations(req)
      if (!hit.ok) return reply.code(429).header('Retry-After', String(hit.retryAfter)).send(errorBody('rate_limit_exceeded', 'Too many client registrations from this address.', { retryAfter: hit.retryAfter }))
      const body = parse(ClientRegistrationRequest, req.body, 'invalid_client_metadata')
      const registered = await application.oauth.registerClient(body)
      return reply.code(201).header('cache-control', 'no-store').send(registered)
    })

    const dashboardSessions = dashboardSessionsOf(application)

    /**
     * Who approves, in this browser: a person signed in to the dashboard (its session cookie), or,
     * as a fallback for accounts without a dashboard sign-in, an earlier API-key sign-in on this page.
     */
    const sessionOf = async (req: FastifyRequest): Promise<Approver | null> => {
      const person = await dashboardSessions.authenticate(req)
      if (person) return { accountId: person.accountId, person: { name: person.name, email: person.email }, approvedBy: { kind: 'person', personId: person.personId } }
      const session = readConsentSession(cookies, req.cookies[SESSION_COOKIE], Date.now())
      return session && (await application.oauth.signedIn(session.accountId, session.keyId)) ? { accountId: session.accountId, person: null, approvedBy: { kind: 'api_key', keyId: session.keyId } } : null
    }

    /** The dashboard's sign-in, coming back to this very authorization request. */
    const signInUrl = (r: ValidAuthorization) => {
      const q = new URLSearchParams({ response_type: 'code', client_id: r.client.clientId, code_challenge: r.codeChallenge, code_challenge_method: 'S256', scope: r.scope, resource: r.resource })
      if (r.redirectUriGiven) q.set('redirect_uri', r.redirectUri)
      if (r.state !== null) q.set('state', r.state)
      return `/app/sign-in?${new URLSearchParams({ next: `/oauth/authorize?${q}` })}`
    }

    const showConsent = async (req: FastifyRequest, reply: FastifyReply, request: ValidAuthorization, signedIn: Approver | null, error: string | null) => {
      let csrfCookie = unsignedCookie(cookies, req.cookies[CSRF_COOKIE])
      if (!csrfCookie || csrfCookie.length < 43) {
        csrfCookie = randomCookieValue()
        setCookie(reply, CSRF_COOKIE, cookies.sign(csrfCookie), { path: '/oauth', maxAgeSeconds: 3600, sameSite: 'Strict', secure })
      }
      const account = signedIn ? ((await application.oauth.accountName(signedIn.accountId)) ?? 'your account') : null
      const signedInAs = signedIn ? (signedIn.person ? `${signedIn.person.name} (${signedIn.person.email}), account ${account}` : account) : null
      return html(reply, error ? 401 : 200, consentPage({ request, csrf: signer.csrfToken(csrfCookie, request.client.clientId, request.codeChallenge), signedInAs, signInUrl: signInUrl(request), error }))
    }

    app.get('/oauth/authorize', async (req, reply) => {
      const q = AuthorizationRequest.safeParse(req.query ?? {})
      if (!q.success) return html(reply, 400, errorPage('The authorization request is malformed.'))
      const checked = await application.oauth.checkAuthorizationRequest(q.data)
      if (!checked.ok) return html(reply, 400, errorPage(checked.description, checked.error))
      const session = await sessionOf(req)
      // Approved before for this client and scope, and signed in: no screen (spec: approve once per client).
      if (session && (await application.oauth.hasConsent(session.accountId, checked.request.client.clientId, checked.request.scope))) {
        const { redirect } = await application.oauth.approve(session.accountId, checked.request, session.approvedBy)
        return reply.header('cache-control', 'no-store').redirect(redirect, 302)
      }
      return showConsent(req, reply, checked.request, session, null)
    })

    app.post('/oauth/authorize', async (req, reply) => {
      const form = ConsentForm.safeParse(req.body ?? {})
      if (!form.success) return html(reply, 400, errorPage('The form is malformed.'))
      const f = form.data
      const checked = await application.oauth.checkAuthorizationRequest(f)
      if (!checked.ok) return html(reply, 400, errorPage(checked.description, checked.error))
      const request = checked.request
      const csrfCookie = unsignedCookie(cookies, req.cookies[CSRF_COOKIE])
      // A form not served by us to this browser for this very request: refused without a redirect.
      if (!csrfCookie || !f.csrf || !signer.matches(f.csrf, 'csrf', csrfCookie, request.client.clientId, request.codeChallenge)) {
        return html(reply, 403, errorPage('The form expired or did not come from this page (CSRF check failed). Start the authorization again from the application.'))
      }
      let signedIn = await sessionOf(req)
      if (f.decision === 'deny') {
        // Only a signed-in person's refusal is sent back by itself (RFC 9700 section 4.11.2);
        // anyone else sees that nothing was shared and decides whether to follow the link back.
        if (signedIn) return reply.header('cache-control', 'no-store').redirect(application.oauth.deny(request), 302)
        return html(reply, 200, declinedPage(request, application.oauth.deny(request)))
      }
      if (f.decision !== 'approve') return html(reply, 400, errorPage('Choose Approve or Deny.'))
      if (!signedIn) {
        const hit = await signIns(req)
        if (!hit.ok) return html(reply, 429, errorPage(`Too many sign-in attempts; try again in ${hit.retryAfter} seconds.`))
        const key = f.api_key?.trim()
        const auth = key ? await application.accounts.authenticate(key) : null
        if (!auth) return showConsent(req, reply, request, null, key ? 'That API key is not valid. Copy it again from the dashboard’s key page.' : 'Sign in to the dashboard first (or give the account’s API key).')
        signedIn = { accountId: auth.accountId, person: null, approvedBy: { kind: 'api_key', keyId: auth.keyId } }
        setCookie(reply, SESSION_COOKIE, cookies.sign(consentSession(auth.accountId, auth.keyId, Date.now())), { path: '/oauth', maxAgeSeconds: SESSION_SECONDS, sameSite: 'Lax', secure })
      }
      const { redirect } = await application.oauth.approve(signedIn.accountId, request, signedIn.approvedBy)
      return reply.header('cache-control', 'no-store').redirect(redirect, 302)
    })

    app.post('/oauth/token', async (req, reply) => {
      const form = parse(TokenRequest, req.body, 'invalid_request')
      const tokens = await application.oauth.token(form, presentedClient(req, form))
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens)
    })

    app.post('/oauth/revoke', async (req, reply) => {
      const form = parse(RevocationRequest, req.body, 'invalid_request')
      await application.oauth.revoke(form, presentedClient(req, form))
      return reply.header('cache-control', 'no-store').send({})
    })
  }
}
