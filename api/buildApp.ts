// The HTTP edge. `buildApp(deps)` builds a fastify instance without listening, so tests use
// `app.inject`; `app/server.ts` listens. Errors are mapped to the spec's error body in one place.
import Fastify, { type FastifyInstance } from 'fastify'
import type { RunningProjection } from '../projections/runner.ts'
import { errorBody, statusOf } from './errors.ts'
import { isDomainError } from '../domain/errors.ts'

export interface AppDeps {
  projections: RunningProjection[]
  version: string
  logger?: boolean
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({ logger: deps.logger ?? false, bodyLimit: 1024 * 1024 })

  app.get('/health', async () => ({
    status: 'ok',
    version: deps.version,
    projections: deps.projections.map((p) => ({ name: p.name, position: p.position() })),
  }))

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody('not_found', `No route ${req.method} ${req.url.split('?')[0]}`))
  })

  app.setErrorHandler((err, req, reply) => {
    if (isDomainError(err)) return reply.code(statusOf(err.code)).send(errorBody(err.code, err.message, err.extra))
    const status = (err as { statusCode?: number }).statusCode ?? 500
    if (status >= 500) {
      req.log.error(err)
      return reply.code(500).send(errorBody('internal_error', 'Something went wrong on our side; the request was not applied.'))
    }
    return reply.code(status).send(errorBody('invalid_request', (err as Error).message))
  })

  return app
}
