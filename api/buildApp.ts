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
import { emptyJsonIsNoBody } from './http/emptyJson.ts'
import { storeFor } from './http/rateLimit.ts'
import { fastifyTrustProxy } from './http/trustProxy.ts'
import { loadShedding } from './http/loadShedding.ts'
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
}

/** The OAuth server's paths a browser-based MCP client calls, and its public metadata. */
export const OAUTH_CROSS_ORIGIN: CrossOriginPaths = {
  checked: ['/oauth/register', '/oauth/token', '/oauth/revoke'],
  open: ['/.well-known/oauth-authorization-server'],
}

const ReadinessBody = z.object({
  status: z.literal('ready'),
  version: z.string(),
  eventStore: z.object({ reachable: z.boolean(), latencyMs: z.number().nullable(), error: z.string().nullable() }),
  projections: z.array(
    z.object({
      name: z.string(),
      position: z.number(),
      behind: z.number(),
      behindAtLeast: z.boolean(),
      inThisProcess: z.boolean(),
      /** The supervised loop's state in this process (null when another process runs it). */
      state: z.enum(['starting', 'running', 'retrying', 'failed', 'stopped']).nullable(),
      retries: z.number(),
      lastError: z.string().nullable(),
    }),
  ),
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
      summary: 'Liveness and projection positions',
      extension: true,
      public: true,
      invalidCode: 'invalid_request',
      response: {
        status: 200,
        schema: z.object({ status: z.literal('ok'), version: z.string(), projections: z.array(z.object({ name: z.string(), position: z.number() })) }),
        description: 'The service is up.',
      },
      errors: [],
      handle: async () => ({ status: 'ok' as const, version: app.settings.version, projections: app.projectionPositions() }),
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
      summary: 'Ready: event store reachable, projection lag, speech engine build and instruction set',
      extension: true,
      public: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: ReadinessBody, description: 'The process can serve; what it serves with.' },
      errors: ['service_unavailable'],
      handle: async () => {
        const r = await app.readiness()
        const { ready, ...checks } = r
        if (!ready) {
          const failed = r.projections.filter((p) => p.state === 'failed').map((p) => p.name)
          const why = r.eventStore.reachable ? `projections failed: ${failed.join(', ')}` : `the event store does not answer (${r.eventStore.error})`
          throw new DomainError('service_unavailable', `Not ready: ${why}.`, { retryAfter: app.settings.loadShedding.retryAfterSeconds, status: 'not_ready', version: app.settings.version, ...checks })
        }
        return { status: 'ready' as const, version: app.settings.version, ...checks }
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
