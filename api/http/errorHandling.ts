// The one error and not-found handling of every listener (REST with the dashboard, and MCP):
// domain errors with their code and status, fastify's own rejections (bad JSON, content type,
// body size) with the route's documented 400 code, anything unexpected as a logged 500 with the
// request id. A fastify-plugin, so it applies to the whole instance it is registered on.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import { DomainError, isDomainError } from '../../domain/errors.ts'
import { errorBody, statusOf } from '../errors.ts'

// Errors a client causes by hanging up or sending a broken stream: not our failure.
const CLIENT_STREAM_ERRORS = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'ECONNABORTED', 'FST_ERR_CTP_INVALID_CONTENT_LENGTH'])

export function sendDomainError(reply: FastifyReply, err: DomainError) {
  if ((err.code === 'rate_limit_exceeded' || err.code === 'service_unavailable') && typeof err.extra.retryAfter === 'number') reply.header('Retry-After', String(err.extra.retryAfter))
  return reply.code(statusOf(err.code)).send(errorBody(err.code, err.message, err.extra))
}

/** fastify's `frameworkErrors` option: errors the router raises before any route runs (malformed or overlong URLs). */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (err, _req, reply) => {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return void sendDomainError(reply, new DomainError('not_found', 'Nothing has an id that long.'))
  void sendDomainError(reply, new DomainError('invalid_request', `Malformed request: ${err.message}`))
}

export function handleError(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
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
}

export const errorHandling = fp(
  async (app: FastifyInstance) => {
    app.setNotFoundHandler((req, reply) => {
      reply.code(404).send(errorBody('not_found', `No route ${req.method} ${req.url.split('?')[0]}.`))
    })
    app.setErrorHandler(handleError)
  },
  { name: 'notes-error-handling' },
)
