// The contract document (OpenAPI 3.1) generated from the route definitions and their zod
// schemas: the same objects that validate requests. Never edited by hand.
import { z } from 'zod'
import type { RouteDef } from './route.ts'
import { statusOf } from './errors.ts'
import type { ErrorCode } from '../domain/errors.ts'
import { PRICES } from '../domain/credits/prices.ts'
import { DELIVERABLE_LOCALES, DELIVERABLE_TEMPLATES } from '../domain/deliverables/templates.ts'
import { ErrorBody, IdempotencyKey } from '../contract/common.ts'
import { WebhookPayload } from '../contract/webhooks.ts'

type Json = Record<string, unknown>
const COMMON_ERRORS: ErrorCode[] = ['invalid_api_key', 'tier_upgrade_required', 'rate_limit_exceeded']

/** Extra fields each error code carries (spec part 7). */
const ERROR_EXTRAS: Partial<Record<ErrorCode, string[]>> = {
  insufficient_credits: ['balance', 'required'],
  quota_exceeded: ['remaining', 'needed'],
  tier_upgrade_required: ['currentTier', 'requiredTier'],
  analysis_not_generated: ['template'],
  invalid_state: ['current'],
  rate_limit_exceeded: ['retryAfter'],
}

class Components {
  readonly schemas: Record<string, Json> = {}

  /** JSON Schema of `schema`, with named (meta id) schemas moved to components and referenced. */
  add(schema: z.ZodType, io: 'input' | 'output'): Json {
    const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json
    const defs = (out.$defs ?? {}) as Record<string, Json>
    delete out.$defs
    delete out.$schema
    const rename = new Map<string, string>()
    for (const [name, def] of Object.entries(defs)) {
      let target = name
      const existing = this.schemas[name]
      if (existing && JSON.stringify(existing) !== JSON.stringify(def)) target = `${name}${io === 'input' ? 'Input' : 'Output'}`
      rename.set(name, target)
      this.schemas[target] = def
    }
    const fix = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(fix)
      if (v && typeof v === 'object') {
        return Object.fromEntries(
          Object.entries(v).map(([k, x]) => [k, k === '$ref' && typeof x === 'string' && x.startsWith('#/$defs/') ? `#/components/schemas/${rename.get(x.slice(8)) ?? x.slice(8)}` : fix(x)]),
        )
      }
      return v
    }
    for (const [name, target] of rename) this.schemas[target] = fix(defs[name]) as Json
    return fix(out) as Json
  }
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{key}')

function parameters(c: Components, schema: z.ZodType | undefined, where: 'path' | 'query'): Json[] {
  if (!schema) return []
  const json = c.add(schema, 'input')
  const props = (json.properties ?? {}) as Record<string, Json>
  const required = new Set((json.required ?? []) as string[])
  return Object.entries(props).map(([name, s]) => {
    const { description, ...rest } = s
    // Lists in a query string are comma separated (contract/common.ts csvFromQuery).
    const csv = where === 'query' && rest.type === 'array' ? { style: 'form', explode: false } : {}
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), ...csv, schema: rest }
  })
}

function idempotencyHeader(c: Components): Json {
  const { description, ...schema } = c.add(IdempotencyKey, 'input')
  return { name: 'Idempotency-Key', in: 'header', required: false, description, schema }
}

function errorResponses(codes: ErrorCode[], conditions: Partial<Record<ErrorCode, string>> = {}): Json {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code])
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list
          .map((code) => `\`${code}\`${ERROR_EXTRAS[code] ? ` (with ${ERROR_EXTRAS[code]!.map((f) => `\`${f}\``).join(', ')})` : ''}${conditions[code] ? `: ${conditions[code]}` : ''}`)
          .join(list.some((code) => conditions[code]) ? '; ' : ', '),
        ...(status === 429 ? { headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } } } : {}),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples: Object.fromEntries(list.map((code) => [code, { value: { error: code } }])) } },
      },
    ]),
  )
}

export function buildOpenApi(routes: readonly RouteDef[], info: { version: string; serverUrl: string }): Json {
  const c = new Components()
  c.add(ErrorBody, 'output')
  const paths: Record<string, Record<string, Json>> = {}
  for (const r of routes) {
    // Every operation can meet a malformed request (its 400 code) and a missing resource or
    // path (404, spec part 7: every endpoint), besides the errors of its own.
    // Every authenticated write takes an Idempotency-Key (api/http/authentication.ts); a malformed
    // one is 400 `invalid_request`, whatever the operation's own 400 code.
    const idempotent = !r.public && r.method !== 'GET'
    const codes = [...new Set([...(r.public ? [] : COMMON_ERRORS), ...(idempotent ? ['invalid_request' as const] : []), r.invalidCode, ...Object.values(r.invalidCodes ?? {}).filter((c): c is ErrorCode => c !== undefined), ...r.errors, 'not_found' as const])]
    const success = r.response.contentTypes
      ? Object.fromEntries(Object.entries(r.response.contentTypes).map(([type, note]) => [type, type === 'application/json' ? { schema: c.add(r.response.schema, 'output') } : { schema: { type: 'string', description: note } }]))
      : { 'application/json': { schema: c.add(r.response.schema, 'output') } }
    const op: Json = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      ...(r.public ? { security: [] } : {}),
      parameters: [
        ...parameters(c, r.params, 'path'),
        ...parameters(c, r.query, 'query'),
        ...(idempotent ? [idempotencyHeader(c)] : []),
      ],
      // A body that may be left out (every field optional) is an optional request body.
      ...(r.body && !r.rawBody ? { requestBody: { required: !r.body.safeParse({}).success, content: { 'application/json': { schema: c.add(r.body, 'input') } } } } : {}),
      ...(r.rawBody ? { requestBody: { required: true, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } } } : {}),
      responses: {
        [String(r.response.status)]: { description: r.response.description, content: success, ...(r.response.links ? { links: r.response.links } : {}) },
        ...Object.fromEntries((r.response.also ?? []).map((a) => [String(a.status), { description: a.description, content: success }])),
        ...errorResponses(codes, r.errorConditions),
      },
      ...(r.extension ? { 'x-service-extension': true } : {}),
      ...(r.price ? { 'x-service-credits': r.price.credits } : {}),
    }
    const path = openApiPath(r.path)
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: op }
  }
  // Outgoing webhooks (docs/webhooks.md "Webhooks"): what the service POSTs to an endpoint.
  const payload = c.add(WebhookPayload, 'output')
  const hook = (type: string, when: string) => ({
    post: {
      summary: `Sent when ${when} (${type}); signed the Standard Webhooks way`,
      parameters: ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => ({ name, in: 'header', required: true, schema: { type: 'string' } })),
      requestBody: { required: true, content: { 'application/json': { schema: payload } } },
      responses: { '2XX': { description: 'Delivered; anything else is retried with backoff.' } },
    },
  })
  return {
    openapi: '3.1.0',
    info: {
      title: 'Audio transcription and analysis service',
      version: info.version,
      description:
        'REST API under /v1 (Pro plan or higher). Operations marked `x-service-extension` are additions to the published interface. The MCP server is at POST /mcp/stream (info at GET /mcp/info).',
    },
    servers: [{ url: info.serverUrl }],
    security: [{ apiKey: [] }],
    paths,
    webhooks: {
      'note.ready': hook('note.ready', 'a transcription ends'),
      'note.failed': hook('note.failed', 'a transcription ends'),
      'note.speakers_updated': hook('note.speakers_updated', 'a speaker of a ready note is named, names are suggested, or lines are given to another speaker (dashboard)'),
    },
    components: {
      schemas: c.schemas,
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' } },
    },
    'x-service-credits': Object.values(PRICES),
    'x-service-deliverable-templates': { ...DELIVERABLE_TEMPLATES, locales: DELIVERABLE_LOCALES },
  }
}
