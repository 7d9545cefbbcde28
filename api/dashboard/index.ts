// The web dashboard on {base_url}: the front end at /app (static files built from web/), its
// JSON endpoints at /app/api, sign-in and sign-out. Registered by api/buildApp.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { fastifyCookie } from '../http/cookies.ts'
import type { Application } from '../../commands/application.ts'
import { DomainError } from '../../domain/errors.ts'
import { normalizeEmail } from '../../domain/accounts/person.ts'
import type { DashboardAuth } from '../../commands/persons.ts'
import { SignInRequest, type SessionInfo } from '../../contract/dashboard.ts'
import { NoteIdParams } from '../../contract/notes.ts'
import { registerRoute } from '../route.ts'
import { emptyJsonIsNoBody } from '../http/emptyJson.ts'
import { requestIdOf } from '../http/authentication.ts'
import { countedLimits, counter, storeFor } from '../http/rateLimit.ts'
import { personCredential } from '../../commands/operationLimits.ts'
import { dashboardSessionsOf } from './session.ts'
import { DASHBOARD_API, dashboardRoutes, referenceRoute } from './routes.ts'
import { sendBlobWithRanges } from './audio.ts'
import { staticDashboard } from './static.ts'

declare module 'fastify' {
  interface FastifyRequest {
    person?: DashboardAuth
  }
}

const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store')

export function dashboard(application: Application) {
  const sessions = dashboardSessionsOf(application)
  return async (app: FastifyInstance) => {
    // Cookies parsed and signed by @fastify/cookie (first of a repeated name wins; a malformed escape is kept as sent).
    await app.register(fastifyCookie, { secret: sessions.cookieSigner })
    emptyJsonIsNoBody(app)
    // Sign-in attempts: per address and per email, so neither a spray nor one guessed account gets
    // far (@fastify/rate-limit counters, counted by the handler once the body is read).
    await app.register(countedLimits, { store: storeFor(application, 'dashboard-sign-in') })
    const perIp = counter(app, { name: 'per-ip', max: 30, windowSeconds: 600, keyOf: (req) => req.ip })
    const perEmail = counter(app, { name: 'per-email', max: 10, windowSeconds: 600, keyOf: (req) => normalizeEmail(String((req.body as { email?: unknown }).email)) })

    const sessionInfo = (auth: DashboardAuth): SessionInfo => ({
      person: { personId: auth.personId, email: auth.email, name: auth.name },
      account: { accountId: auth.accountId, name: auth.accountName, plan: auth.plan },
      expiresAt: auth.expiresAt,
      csrfToken: sessions.csrfFor(auth.sessionId),
    })

    // ---- session: who is signed in, sign in, sign out (open routes) ----------------------------
    app.register(async (open) => {
      open.addHook('onRequest', async (_req, reply) => void noStore(reply))

      /** Always 200, so the front end never logs an error for "not signed in": `signedIn` says. */
      open.get(`${DASHBOARD_API}/session`, async (req, reply) => {
        const auth = await sessions.authenticate(req)
        if (auth) return { signedIn: true, ...sessionInfo(auth) }
        if (sessions.hasSessionCookie(req)) sessions.endSession(reply)
        return { signedIn: false, csrfToken: sessions.preSessionCsrf(req, reply) }
      })

      open.post(`${DASHBOARD_API}/session`, { config: { invalidCode: 'invalid_request' } }, async (req, reply) => {
        sessions.checkCsrf(req, null)
        const body = SignInRequest.safeParse(req.body ?? {})
        if (!body.success) throw new DomainError('invalid_request', 'Send email and password.')
        for (const limiter of [perIp, perEmail]) {
          const hit = await limiter(req)
          if (!hit.ok) throw new DomainError('rate_limit_exceeded', `Too many sign-in attempts; try again in ${hit.retryAfter} s.`, { retryAfter: hit.retryAfter })
        }
        const signed = await application.persons.signIn(body.data.email, body.data.password, { userAgent: req.headers['user-agent'] ?? null })
        if (!signed) throw new DomainError('invalid_credentials', 'That email and password do not match.')
        sessions.startSession(reply, signed.token, signed.expiresAt)
        const auth = await application.persons.authenticate(signed.token)
        if (!auth) throw new Error('a session just started does not stand')
        return reply.code(201).send({ signedIn: true, ...sessionInfo(auth) })
      })

      registerRoute(open, referenceRoute)

      open.delete(`${DASHBOARD_API}/session`, async (req, reply) => {
        const auth = await sessions.authenticate(req)
        sessions.checkCsrf(req, auth)
        await application.persons.signOut(sessions.token(req))
        sessions.endSession(reply)
        return { signedOut: true }
      })
    })

    // ---- everything else needs the session (and its CSRF token to change anything) -------------
    app.register(async (signedIn) => {
      signedIn.addHook('onRequest', async (req, reply) => {
        noStore(reply)
        const auth = await sessions.authenticate(req)
        if (!auth) {
          const why = req.headers.authorization ? 'The dashboard does not take API keys; sign in with your email and password.' : 'Sign in first.'
          throw new DomainError('not_signed_in', why)
        }
        sessions.checkCsrf(req, auth)
        if (req.routeOptions.config.route?.price) sessions.checkSameSite(req)
        req.person = auth
        req.caller = { accountId: auth.accountId, plan: auth.plan, keyId: null, requestId: requestIdOf(req, auth.accountId), via: 'dashboard' }
      })
      // An operation's own limit (10 suggestions an hour) holds on the dashboard too, per person.
      signedIn.addHook('preParsing', async (req) => {
        const extra = req.routeOptions.config.route?.rateLimit
        if (extra) await application.limits.hit(extra, personCredential(req.person!.personId))
      })
      for (const r of dashboardRoutes(application)) registerRoute(signedIn, r)

      signedIn.get(`${DASHBOARD_API}/notes/:id/audio`, async (req: FastifyRequest, reply) => {
        const params = NoteIdParams.safeParse(req.params)
        if (!params.success) throw new DomainError('not_found', 'No note with that id belongs to you.')
        const audio = await application.notes.audio(req.caller!, params.data.id)
        if (!audio) throw new DomainError('not_found', 'This note has no stored audio (imported links keep none).')
        // Private to the signed-in browser; the player re-reads ranges as it seeks.
        reply.header('cache-control', 'private, no-store')
        return sendBlobWithRanges(req, reply, application.blobs, audio)
      })

      // Unknown /app/api paths are JSON 404s, not the front end's index.html.
      signedIn.all(`${DASHBOARD_API}/*`, async (req) => {
        throw new DomainError('not_found', `No route ${req.method} ${req.url.split('?')[0]}.`)
      })
    })

    // The page uploads from the browser to the presigned URL: the blob store's origin may take its
    // requests (an S3 bucket elsewhere; the local store is this origin). Signing needs no network.
    const probe = await application.blobs.presignPut('uploads/origin-probe', { contentType: 'audio/wav', maxBytes: 1, exactBytes: 1, expiresInSeconds: 60 })
    const uploadOrigin = new URL(probe.url).origin
    app.register(staticDashboard(undefined, { connectOrigins: uploadOrigin === new URL(application.settings.publicBaseUrl).origin ? [] : [uploadOrigin] }))
  }
}
