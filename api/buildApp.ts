// The HTTP edge. `buildApp(services)` builds a fastify instance without listening, so tests use
// `app.inject`; `app/server.ts` listens. Every error leaves through one handler, in the spec's
// shape: domain errors with their code, fastify's own rejections (bad JSON, content type, body
// size) with the route's documented 400 code, anything unexpected as a logged 500.
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { DomainError } from '../domain/errors.ts'
import type { Application } from '../commands/application.ts'
import { restAuthentication } from './http/authentication.ts'
import { clientErrorHandler, errorHandling, frameworkErrors } from './http/errorHandling.ts'
import { noSniff } from './http/securityHeaders.ts'
import { shuttingDown } from './http/shuttingDown.ts'
import { isOperator } from './http/operatorToken.ts'
import { emptyJsonIsNoBody } from './http/emptyJson.ts'
import { storeFor } from './http/rateLimit.ts'
import { fastifyTrustProxy } from './http/trustProxy.ts'
import { loadShedding } from './http/loadShedding.ts'
import { observability } from './http/observability.ts'
import { crossOrigin, ownOrigins, type CrossOriginPaths } from './http/crossOrigin.ts'
import { registerRoute, defineRoute, type RouteDef } from './route.ts'
import { buildOpenApi } from './openapi.ts'
import { featureRoutes } from './routes/index.ts'
import { oauthRoutes } from './oauth/routes.ts'
import { dashboard } from './dashboard/index.ts'

export interface BuildAppOptions {
  logger?: FastifyServerOptions['logger']
  /** More routes on this host, under the same error handling (app/http.ts mounts MCP's). */
  mounts?: FastifyPluginAsync[]
  /** The mounts' paths for CORS (api/http/crossOrigin.ts), beside the OAuth server's own. */
  crossOriginPaths?: CrossOriginPaths
  /** METRICS_TOKEN: serves GET /metrics to a caller with this bearer token (api/http/observability.ts). */
  metricsToken?: string | null
}

/** The OAuth server's paths a browser-based MCP client calls, and its public metadata. */
export const OAUTH_CROSS_ORIGIN: CrossOriginPaths = {
  checked: ['/oauth/register', '/oauth/token', '/oauth/revoke'],
  open: ['/.well-known/oauth-authorization-server'],
}

const Check = z.object({ reachable: z.boolean(), latencyMs: z.number().nullable(), error: z.string().nullable() })
const LoopState = z.enum(['starting', 'running', 'retrying', 'rebuilding', 'failed', 'stopped'])
const ProjectionBody = z.object({
  name: z.string(),
  position: z.number(),
  behind: z.number().nullable(),
  behindAtLeast: z.boolean(),
  inThisProcess: z.boolean(),
  /** The supervised loop's state in this process (null when another process runs it). */
  state: LoopState.nullable(),
  retries: z.number(),
  lastError: z.string().nullable(),
})
/** The operator's detail (HEALTH_TOKEN, or the health port): absent from the public answer. */
export const ReadinessDetail = z.object({
  version: z.string(),
  roles: z.array(z.string()),
  reasons: z.array(z.string()),
  eventStore: Check,
  readModelStore: Check.nullable(),
  blobStore: Check.nullable(),
  keyStore: Check.nullable(),
  kafka: z.object({ state: z.enum(['connecting', 'up', 'down', 'closed']), since: z.string(), downSeconds: z.number(), error: z.string().nullable() }).nullable(),
  projections: z.array(ProjectionBody.extend({ checkpoint: z.enum(['present', 'missing', 'unknown']), stalledSeconds: z.number().nullable() })),
  forwarder: ProjectionBody.nullable(),
  speech: z.object({
    engine: z.string(),
    provider: z.string(),
    model: z.string(),
    state: z.enum(['ready', 'preparing', 'unavailable', 'remote']),
    summary: z.string(),
    reason: z.string().nullable(),
    details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  }),
})
const ReadinessBody = z.object({ status: z.literal('ready') }).extend(ReadinessDetail.partial().shape)

/** /readyz's answer: the public one says ready or not; the operator's adds every check. */
export async function readinessAnswer(app: Application, detail: boolean): Promise<{ ready: true; body: z.infer<typeof ReadinessBody> } | { ready: false; error: DomainError }> {
  const { ready, ...checks } = await app.readiness()
  const retryAfter = app.settings.loadShedding.retryAfterSeconds
  if (ready) return { ready, body: detail ? { status: 'ready', version: app.settings.version, ...checks } : { status: 'ready' } }
  if (!detail) return { ready, error: new DomainError('service_unavailable', 'Not ready.', { retryAfter, status: 'not_ready' }) }
  return { ready, error: new DomainError('service_unavailable', `Not ready: ${checks.reasons.join('; ')}.`, { retryAfter, status: 'not_ready', version: app.settings.version, ...checks }) }
}

export function allRoutes(app: Application): RouteDef[] {
  const contract: RouteDef[] = []
  const meta: RouteDef[] = [
    defineRoute({
      operationId: 'getOpenApi',
      method: 'GET',
      path: '/v1/openapi.json',
      tag: 'meta',
      summary: 'This contract (OpenAPI 3.1)',
      public: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: z.looseObject({ openapi: z.string() }), description: 'The contract document.' },
      errors: [],
      handle: async () => openapi as { openapi: string },
    }),
    defineRoute({
      operationId: 'getHealth',
      method: 'GET',
      path: '/health',
      tag: 'meta',
      summary: 'Liveness (projection positions for the operator)',
      extension: true,
      public: true,
      invalidCode: 'invalid_request',
      response: {
        status: 200,
        schema: z.object({ status: z.literal('ok'), version: z.string(), projections: z.array(z.object({ name: z.string(), position: z.number() })).optional() }),
        description: 'The service is up. The projection positions only with `Authorization: Bearer <HEALTH_TOKEN>`.',
      },
      errors: [],
      handle: async ({ req }) => ({ status: 'ok' as const, version: app.settings.version, ...(isOperator(req, app.settings.health.token) ? { projections: app.projectionPositions() } : {}) }),
    }),
  ]
  meta.push(
    defineRoute({
      operationId: 'getLiveness',
      method: 'GET',
      path: '/healthz',
      tag: 'meta',
      summary: 'Alive (never shed under load)',
      extension: true,
      public: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: z.object({ status: z.literal('ok'), version: z.string(), uptimeSeconds: z.number() }), description: 'The process answers.' },
      errors: [],
      handle: async () => ({ status: 'ok' as const, version: app.settings.version, uptimeSeconds: Math.round(process.uptime()) }),
    }),
    defineRoute({
      operationId: 'getReadiness',
      method: 'GET',
      path: '/readyz',
      tag: 'meta',
      summary: 'Ready: the stores, read models and forwarder this process depends on (the detail for the operator)',
      extension: true,
      public: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: ReadinessBody, description: 'The process can serve. Every check only with `Authorization: Bearer <HEALTH_TOKEN>` (or on the health port).' },
      errors: ['service_unavailable'],
      handle: async ({ req }) => {
        const r = await readinessAnswer(app, isOperator(req, app.settings.health.token))
        if (!r.ready) throw r.error
        return r.body
      },
    }),
  )
  contract.push(...featureRoutes(app), ...meta)
  const openapi = buildOpenApi(contract, { version: app.settings.version, serverUrl: app.settings.publicBaseUrl })
  return contract
}

export function buildApp(application: Application, options: BuildAppOptions = {}): FastifyInstance {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: 1024 * 1024,
    genReqId: () => randomUUID(),
    frameworkErrors,
    clientErrorHandler,
    // TRUST_PROXY: the client address (req.ip, what the sign-in and registration limits count)
    // from X-Forwarded-For when a load balancer sits in front.
    trustProxy: fastifyTrustProxy(application.settings.trustProxy),
    // The spec's body instead of fastify's own (api/http/shuttingDown.ts).
    return503OnClosing: false,
  })
  app.register(observability, { metricsToken: options.metricsToken ?? null })
  app.register(errorHandling)
  app.register(shuttingDown, { retryAfterSeconds: application.settings.loadShedding.retryAfterSeconds })
  app.register(noSniff)
  app.register(loadShedding, application.settings.loadShedding)
  app.register(crossOrigin, {
    paths: {
      checked: [...OAUTH_CROSS_ORIGIN.checked, ...(options.crossOriginPaths?.checked ?? [])],
      open: [...OAUTH_CROSS_ORIGIN.open, ...(options.crossOriginPaths?.open ?? [])],
    },
    allowedOrigins: application.settings.mcp.allowedOrigins,
    ownOrigins: ownOrigins(application.settings),
  })
  const routes = allRoutes(application)
  const paths = routes.map((r) => r.path)
  // What fastify really serves, so a test can hold the contract against it.
  const served: { method: string; url: string }[] = []
  app.decorate('servedRoutes', served)
  app.addHook('onRoute', (r) => {
    // Hidden routes are plumbing, not operations (the CORS preflight route of @fastify/cors).
    if ((r.schema as { hide?: boolean } | undefined)?.hide) return
    for (const method of [r.method].flat()) if (method !== 'HEAD') served.push({ method, url: r.url })
  })

  app.register(async (v1) => {
    emptyJsonIsNoBody(v1)
    await v1.register(restAuthentication, { app: application, store: storeFor(application, 'rest') })
    for (const r of routes) if (!r.public) registerRoute(v1, r, paths)
  })
  app.register(async (open) => {
    emptyJsonIsNoBody(open)
    for (const r of routes) if (r.public && !r.rawBody) registerRoute(open, r, paths)
  })
  app.register(async (raw) => {
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload))
    for (const r of routes) if (r.public && r.rawBody) registerRoute(raw, r, paths)
  })

  // The OAuth authorization server behind MCP (MCP itself is one of the mounts, from app/http.ts).
  app.register(oauthRoutes(application))
  for (const m of options.mounts ?? []) app.register(m)
  // The web dashboard ({dashboard_url} = /app) and its JSON endpoints (/app/api): session cookies only.
  app.register(dashboard(application))

  return app
}

declare module 'fastify' {
  interface FastifyInstance {
    servedRoutes: { method: string; url: string }[]
  }
}
