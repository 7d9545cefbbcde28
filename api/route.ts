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
  /**
   * Body fields whose own code is not `invalidCode` (create's `invalidCode` is about the link; a
   * bad `fileSizeBytes` is not a bad link). Used when every problem is in such fields.
   */
  fieldCodes?: Record<string, ErrorCode>
  /** A field of the query or body whose unknown values have a code of their own (`translation` -> `invalid_language`). */
  invalidCodes?: Partial<Record<string, ErrorCode>>
  response: {
    status: number
    schema: R
    description: string
    contentTypes?: Record<string, string>
    /** Other success statuses with the same body (the handler sends those itself with `reply.code(n).send(body)`). */
    also?: { status: number; description: string }[]
    /** OpenAPI links: operations that take a value of this answer (`$response.body#/noteId`) as a parameter. */
    links?: Record<string, { operationId: string; parameters: Record<string, string> }>
  }
  /** Errors specific to this route (the common 401/403/429 are added to every authenticated route). */
  errors: ErrorCode[]
  /** When a code means more here than its name says (a refusal no schema can state), the contract says so. */
  errorConditions?: Partial<Record<ErrorCode, string>>
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

function parse<S extends Schema>(
  schema: S | undefined,
  value: unknown,
  fallback: ErrorCode,
  where: string,
  codes: { unknownValues?: Partial<Record<string, ErrorCode>>; fields?: Record<string, ErrorCode> } = {},
): z.infer<S> {
  if (!schema) return undefined as z.infer<S>
  const r = schema.safeParse(value)
  if (r.success) return r.data
  // A field's own code for a value it does not know (an enum, a pattern); sizes and types stay the route's...
  const unknownValue = r.error.issues.map((i) => (i.code === 'invalid_value' || i.code === 'invalid_format' ? codes.unknownValues?.[String(i.path[0])] : undefined)).find((c) => c !== undefined)
  // ...unless every problem is in fields with a code of their own (a bad upload size is not a bad link).
  const fieldCodes = new Set(r.error.issues.map((i) => codes.fields?.[String(i.path[0])] ?? fallback))
  const code = unknownValue ?? (fieldCodes.size === 1 ? [...fieldCodes][0]! : fallback)
  const issues = r.error.issues.slice(0, 5).map((i) => `${[where, ...i.path].join('.')}: ${i.message}`)
  throw new DomainError(code, `Invalid request: ${issues.join('; ')}`, { issues: r.error.issues.slice(0, 20).map((i) => ({ path: [where, ...i.path].join('.'), message: i.message })) })
}

/**
 * For each path parameter, the literal segments other routes have in its place
 * (`/v1/voice-profiles/:profileId` and `/v1/voice-profiles/consent`): such a value names that
 * other resource, so a method it lacks is answered by the not-found handler (405 with Allow).
 */
function shadowedValues(path: string, others: readonly string[]): Map<string, Set<string>> {
  const mine = path.split('/')
  const out = new Map<string, Set<string>>()
  for (const other of others) {
    const theirs = other.split('/')
    if (other === path || theirs.length !== mine.length) continue
    const compatible = (i: number) => mine[i] === theirs[i] || mine[i]!.startsWith(':') || theirs[i]!.startsWith(':')
    for (let i = 0; i < mine.length; i++) {
      if (!mine[i]!.startsWith(':') || theirs[i]!.startsWith(':')) continue
      if (mine.every((_, j) => j === i || compatible(j))) {
        const name = mine[i]!.slice(1)
        out.set(name, (out.get(name) ?? new Set()).add(theirs[i]!))
      }
    }
  }
  return out
}

export function registerRoute(app: FastifyInstance, r: RouteDef, allPaths: readonly string[] = []) {
  const shadowed = shadowedValues(r.path, allPaths)
  app.route({
    method: r.method,
    url: r.path,
    config: { invalidCode: r.invalidCode, route: r },
    handler: async (req, reply) => {
      for (const [name, values] of shadowed) if (values.has((req.params as Record<string, string>)[name]!)) return reply.callNotFound()
      const params = parse(r.params, req.params, r.notFound ? 'not_found' : r.invalidCode, 'path')
      const query = parse(r.query, req.query ?? {}, r.invalidCode, 'query', { unknownValues: r.invalidCodes })
      const body = r.rawBody ? req.body : parse(r.body, req.body ?? {}, r.invalidCode, 'body', { unknownValues: r.invalidCodes, fields: r.fieldCodes })
      const result = await r.handle({ caller: req.caller!, params, query, body, req, reply })
      if (reply.sent) return reply
      reply.code(r.response.status)
      return result
    },
  })
}
