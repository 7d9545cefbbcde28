// The one error and not-found handling of every listener (REST with the dashboard, and MCP):
// domain errors with their code and status, fastify's own rejections (bad JSON, content type,
// body size) with the route's documented 400 code, anything unexpected as a logged 500 with the
// request id. A fastify-plugin, so it applies to the whole instance it is registered on.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import type { Socket } from 'node:net'
import { STATUS_CODES } from 'node:http'
import fp from 'fastify-plugin'
import { DomainError, isDomainError } from '../../domain/errors.ts'
import { errorBody, statusOf, unavailable } from '../errors.ts'

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

/**
 * fastify's `clientErrorHandler`: what Node's HTTP parser refuses before fastify sees a request
 * (bytes a header may not hold, two Content-Lengths, Content-Length with Transfer-Encoding,
 * headers over the size limit) still gets the spec's error body, not fastify's own shape.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket) {
  // A reset connection has nobody to answer (Node's own rule for 'clientError').
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, body] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, errorBody('request_timeout', 'The request was not received in time.')]
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, errorBody('headers_too_large', 'The request headers are larger than the server accepts.')]
        : [400, errorBody('invalid_request', `Malformed HTTP request (${(err.code ?? 'parse error').replace(/^HPE_/, '').toLowerCase()}).`)]
  const json = JSON.stringify(body)
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`)
  }
  socket.destroy(err)
}

/** fastify's route pattern (`/v1/notes/:id`) as a regular expression over a path. */
function patternOf(url: string): RegExp {
  const parts = url.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
  return new RegExp(`^${parts.join('/')}/?$`)
}

/** The methods each served path has, for `405` and its `Allow` header. */
class MethodTable {
  private readonly routes = new Map<string, { pattern: RegExp; segments: string[]; methods: Set<string> }>()
  add(url: string, methods: string[]) {
    // A wildcard (the dashboard's pages) stands for every path below it: it would turn each
    // unknown path there into a 405, where "nothing here" is the truthful answer.
    if (url.includes('*')) return
    let r = this.routes.get(url)
    if (!r) this.routes.set(url, (r = { pattern: patternOf(url), segments: url.split('/'), methods: new Set() }))
    for (const m of methods) r.methods.add(m)
    if (r.methods.has('GET')) r.methods.add('HEAD')
  }
  allowed(path: string): string[] {
    let matches = [...this.routes.values()].filter((r) => r.pattern.test(path))
    // As the router decides: a literal segment beats a parameter at the same place, so
    // /v1/voice-profiles/consent is that resource, not a profile called "consent".
    const segments = path.split('/')
    for (let i = 0; i < segments.length; i++) {
      if (matches.some((r) => r.segments[i] === segments[i])) matches = matches.filter((r) => !r.segments[i]?.startsWith(':'))
    }
    const out = new Set<string>()
    for (const r of matches) for (const m of r.methods) out.add(m)
    return [...out].sort()
  }
}

const BODY_REFUSAL = /^FST_ERR_(CTP_|ROUTE_MISSING_CONTENT)/

export function handleError(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  if (isDomainError(err)) return sendDomainError(reply, err)
  const notNow = unavailable(err)
  if (notNow) return (req.log.warn({ err }, 'store unavailable'), sendDomainError(reply, notNow))
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
    const methods = new MethodTable()
    app.addHook('onRoute', (r) => methods.add(r.url, [r.method].flat()))
    const noRoute = (req: FastifyRequest, reply: FastifyReply) => {
      const path = req.url.split('?')[0]!
      // The path exists with other methods: 405 with Allow (RFC 9110 15.5.6), not "no route".
      const allow = methods.allowed(path)
      if (allow.length > 0 && !allow.includes(req.method)) {
        return reply
          .code(405)
          .header('Allow', allow.join(', '))
          .send(errorBody('method_not_allowed', `${req.method} is not allowed on ${path}; allowed: ${allow.join(', ')}.`))
      }
      return reply.code(404).send(errorBody('not_found', `No route ${req.method} ${path}.`))
    }
    app.setNotFoundHandler(noRoute)
    // With no route for the method, fastify still reads the body on the way to the not-found
    // handler and may refuse it first (a QUERY without Content-Type, RFC 10008): the missing
    // route is the answer, not the body.
    app.setErrorHandler((err: FastifyError, req, reply) => (!req.routeOptions?.url && BODY_REFUSAL.test((err as { code?: string }).code ?? '') ? noRoute(req, reply) : handleError(err, req, reply)))
  },
  { name: 'notes-error-handling' },
)
