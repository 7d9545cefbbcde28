// A REST route as data: its schemas, documented errors, price and handler. The same definition
// registers the fastify route (validation with the zod schemas, errors in the spec's shape) and
// produces its OpenAPI operation, so the contract document can never drift from the code.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { z } from 'zod'
import { DomainError, type ErrorCode } from '../domain/errors.ts'
import type { Price } from '../domain/credits/prices.ts'
import type { OperationLimit } from '../domain/limits.ts'
import type { Caller } from '../commands/context.ts'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
type Schema = z.ZodType

export interface HandlerInput<P, Q, B> {
  caller: Caller
  params: P
  query: Q
  body: B
  req: FastifyRequest
  reply: FastifyReply
}

export interface RouteDef<P extends Schema = Schema, Q extends Schema = Schema, B extends Schema = Schema, R extends Schema = Schema> {
  operationId: string
  method: Method
  /** fastify syntax: `/v1/notes/:id`. */
  path: string
  summary: string
  description?: string
  tag: string
  params?: P
  query?: Q
  body?: B
  /** The 400 code for anything wrong with the request (schema, JSON, content type, size). */
  invalidCode: ErrorCode
  response: {
    status: number
    schema: R
    description: string
    contentTypes?: Record<string, string>
    /** Other success statuses with the same body (the handler sends those itself with `reply.code(n).send(body)`). */
    also?: { status: number; description: string }[]
  }
  /** Errors specific to this route (the common 401/403/429 are added to every authenticated route). */
  errors: ErrorCode[]
  /** Not part of the spec: marked `x-service-extension` in the contract. */
  extension?: boolean
  price?: Price
  /** Extra limit on top of the per-key rate limit (e.g. 10 per hour), counted in the shared `OperationLimits`. */
  rateLimit?: OperationLimit
  /** Path ids that do not parse answer 404 `not_found`, like ids of someone else's notes. */
  notFound?: boolean
  /** No API key (the upload URL carries its own signature; the contract document itself). */
  public?: boolean
  /** The handler reads the body as a stream (`req.body` is the raw request). */
  rawBody?: boolean
  handle(input: HandlerInput<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<z.infer<R> | string>
}

/**
 * The same definition (schemas, handler, errors) served under another prefix: the dashboard
 * mounts REST routes under /app/api, where the session authenticates instead of an API key.
 * The operation gets a `dashboard` id and tag of its own, so both can sit in one document.
 */
export function mountedAt(r: RouteDef, from: string, to: string): RouteDef {
  if (!r.path.startsWith(from)) throw new Error(`${r.operationId}: ${r.path} is not under ${from}`)
  return { ...r, path: to + r.path.slice(from.length), operationId: `dashboard${r.operationId[0]!.toUpperCase()}${r.operationId.slice(1)}`, tag: 'dashboard' }
}

// Types stay precise at the definition while the registry holds routes of every shape.
export const defineRoute = <P extends Schema, Q extends Schema, B extends Schema, R extends Schema>(r: RouteDef<P, Q, B, R>) => r as unknown as RouteDef

declare module 'fastify' {
  interface FastifyContextConfig {
    invalidCode?: ErrorCode
    route?: RouteDef
  }
  interface FastifyRequest {
    caller?: Caller
  }
}

function parse<S extends Schema>(schema: S | undefined, value: unknown, code: ErrorCode, where: string): z.infer<S> {
  if (!schema) return undefined as z.infer<S>
  const r = schema.safeParse(value)
  if (r.success) return r.data
  const issues = r.error.issues.slice(0, 5).map((i) => `${[where, ...i.path].join('.')}: ${i.message}`)
  throw new DomainError(code, `Invalid request: ${issues.join('; ')}`, { issues: r.error.issues.slice(0, 20).map((i) => ({ path: [where, ...i.path].join('.'), message: i.message })) })
}

export function registerRoute(app: FastifyInstance, r: RouteDef) {
  app.route({
    method: r.method,
    url: r.path,
    config: { invalidCode: r.invalidCode, route: r },
    handler: async (req, reply) => {
      const params = parse(r.params, req.params, r.notFound ? 'not_found' : r.invalidCode, 'path')
      const query = parse(r.query, req.query ?? {}, r.invalidCode, 'query')
      const body = r.rawBody ? req.body : parse(r.body, req.body ?? {}, r.invalidCode, 'body')
      const result = await r.handle({ caller: req.caller!, params, query, body, req, reply })
      if (reply.sent) return reply
      reply.code(r.response.status)
      return result
    },
  })
}
