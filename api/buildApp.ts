// The HTTP edge. `buildApp(services)` builds a fastify instance without listening, so tests use
// `app.inject`; `app/server.ts` listens. Every error leaves through one handler, in the spec's
// shape: domain errors with their code, fastify's own rejections (bad JSON, content type, body
// size) with the route's documented 400 code, anything unexpected as a logged 500.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { Application } from '../commands/application.ts'
import { DomainError, isDomainError } from '../domain/errors.ts'
import { errorBody, statusOf } from './errors.ts'
import { restAuth } from './auth.ts'
import { registerRoute, defineRoute, type RouteDef } from './route.ts'
import { buildOpenApi } from './openapi.ts'
import { featureRoutes } from './routes/index.ts'
import { oauthRoutes } from './oauth/routes.ts'
import { mcpBaseRoutes } from '../mcp/http.ts'
import { dashboard } from './dashboard/index.ts'

export interface BuildAppOptions {
  logger?: FastifyServerOptions['logger']
}

// Errors a client causes by hanging up or sending a broken stream: not our failure.
const CLIENT_STREAM_ERRORS = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'ECONNABORTED', 'FST_ERR_CTP_INVALID_CONTENT_LENGTH'])

export function allRoutes(s: Application): RouteDef[] {
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
      handle: async () => ({ status: 'ok' as const, version: s.settings.version, projections: s.projectionPositions() }),
    }),
  ]
  contract.push(...featureRoutes(s), ...meta)
  const openapi = buildOpenApi(contract, { version: s.settings.version, serverUrl: s.settings.publicBaseUrl })
  return contract
}

export function buildApp(s: Application, options: BuildAppOptions = {}): FastifyInstance {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: 1024 * 1024,
    genReqId: () => randomUUID(),
    // Errors the router raises before any route runs (malformed or overlong URLs).
    frameworkErrors: (err, _req, reply) => {
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return void sendDomainError(reply, new DomainError('not_found', 'Nothing has an id that long.'))
      void sendDomainError(reply, new DomainError('invalid_request', `Malformed request: ${err.message}`))
    },
  })
  const routes = allRoutes(s)
  // What fastify really serves, so a test can hold the contract against it.
  const served: { method: string; url: string }[] = []
  app.decorate('servedRoutes', served)
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') served.push({ method, url: r.url })
  })

  app.register(async (v1) => {
    restAuth(v1, { accounts: s.accounts, rateLimit: s.settings.rateLimit, limits: s.limits })
    for (const r of routes) if (!r.public) registerRoute(v1, r)
  })
  app.register(async (open) => {
    for (const r of routes) if (r.public && !r.rawBody) registerRoute(open, r)
  })
  app.register(async (raw) => {
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload))
    for (const r of routes) if (r.public && r.rawBody) registerRoute(raw, r)
  })

  // MCP on the REST host (POST /mcp/stream, GET /mcp/info) and its OAuth authorization server.
  app.register(mcpBaseRoutes(s))
  app.register(oauthRoutes(s))
  // The web dashboard ({dashboard_url} = /app) and its JSON endpoints (/app/api): session cookies only.
  app.register(dashboard(s))

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody('not_found', `No route ${req.method} ${req.url.split('?')[0]}.`))
  })

  app.setErrorHandler((err, req, reply) => {
    if (isDomainError(err)) return sendDomainError(reply, err)
    const e = err as { statusCode?: number; code?: string; message?: string }
    const invalidCode = req.routeOptions?.config?.invalidCode ?? 'invalid_request'
    if (e.code && CLIENT_STREAM_ERRORS.has(e.code)) return sendDomainError(reply, new DomainError('invalid_request', 'The request body ended early or was malformed.'))
    const status = e.statusCode ?? 500
    if (status >= 400 && status < 500) {
      const why = e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'The request body is larger than 1 MiB.' : `Invalid request: ${e.message ?? 'malformed'}`
      return sendDomainError(reply, new DomainError(invalidCode, why))
    }
    req.log.error({ err }, 'request failed')
    return reply.code(500).send(errorBody('internal_error', 'Something went wrong on our side; quote the requestId if you report it.', { requestId: req.id }))
  })

  return app
}

declare module 'fastify' {
  interface FastifyInstance {
    servedRoutes: { method: string; url: string }[]
  }
}

function sendDomainError(reply: import('fastify').FastifyReply, err: DomainError) {
  if (err.code === 'rate_limit_exceeded' && typeof err.extra.retryAfter === 'number') reply.header('Retry-After', String(err.extra.retryAfter))
  return reply.code(statusOf(err.code)).send(errorBody(err.code, err.message, err.extra))
}
