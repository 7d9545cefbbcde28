// Who a request acts for, once for every listener. REST (spec parts 4 and 5): a live API key
// (401 otherwise), the per-key rate limit (429), then the plan (403 below Pro) and the route's
// operation limit; the key is checked on `onRequest` and the plan before the body is parsed, so
// an anonymous caller learns nothing about the body. MCP: the bearer token is an API key (any
// plan) or an OAuth access token of our authorization server issued for this very endpoint
// (RFC 8707: {mcp_url} and {base_url}/mcp/stream are two resources, each with its own protected
// resource metadata, so a token for one is refused at the other); a failure is 401 with
// WWW-Authenticate naming the endpoint's protected resource metadata (RFC 9728 section 5.1),
// which is how an AI client discovers the OAuth flow. The SDK's auth helpers are express-only.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import { DomainError } from '../../domain/errors.ts'
import { REST_MIN_PLAN, planAtLeast } from '../../domain/credits/plans.ts'
import { looksLikeAccessToken } from '../../domain/oauth/tokens.ts'
import { trimSlash } from '../../commands/oauth.ts'
import type { Application } from '../../commands/application.ts'
import type { Caller } from '../../commands/context.ts'
import { apiKeyCredential } from '../../commands/operationLimits.ts'
import { errorBody } from '../errors.ts'
import { IdempotencyKey } from '../../contract/common.ts'
import { limitPerCredential, type RateLimitStore } from './rateLimit.ts'

export const bearerToken = (header: string | undefined): string | null => /^Bearer +([^\s]+) *$/i.exec(header ?? '')?.[1] ?? null

export interface RestAuthOptions {
  app: Application
  store?: RateLimitStore
}

/**
 * The request's id for the commands. An Idempotency-Key names the request across the client's
 * retries: commands derive their event ids (and charge ids) from it, so a retried request applies
 * once. A key the client sent but we could not use would make its retry apply twice: refused.
 */
export function requestIdOf(req: FastifyRequest, accountId: string): string {
  const key = req.headers['idempotency-key']
  if (key === undefined) return String(req.id ?? randomUUID())
  if (!IdempotencyKey.safeParse(key).success) {
    throw new DomainError('invalid_request', 'The Idempotency-Key header must be 1 to 200 printable ASCII characters without spaces, sent once.')
  }
  return `idem:${accountId}:${key}`
}

/** The REST check, for every route registered after it in this context. */
export const restAuthentication = fp<RestAuthOptions>(
  async (v1: FastifyInstance, { app: s, store }) => {
    v1.addHook('onRequest', async (req, reply) => {
      const token = bearerToken(req.headers.authorization)
      const auth = token ? await s.accounts.authenticate(token) : null
      if (!auth) {
        reply.header('WWW-Authenticate', 'Bearer realm="notes-api"')
        throw new DomainError('invalid_api_key', token ? 'The API key is not valid (revoked, mistyped, or not an API key).' : 'Send an API key as "Authorization: Bearer <API_KEY>".')
      }
      req.caller = { accountId: auth.accountId, plan: auth.plan, keyId: auth.keyId, requestId: requestIdOf(req, auth.accountId), via: 'rest' }
    })
    await v1.register(limitPerCredential, {
      max: s.settings.rateLimit.max,
      windowSeconds: s.settings.rateLimit.windowSeconds,
      keyOf: (req) => req.caller!.keyId!,
      message: (retryAfter) => `Too many requests for this API key; retry in ${retryAfter} s.`,
      ...(store ? { store } : {}),
    })
    v1.addHook('preParsing', async (req) => {
      const caller = req.caller!
      if (!planAtLeast(caller.plan, REST_MIN_PLAN)) {
        throw new DomainError('tier_upgrade_required', `The REST API needs the ${REST_MIN_PLAN} plan or higher; this account is on ${caller.plan}. MCP works on every plan.`, {
          currentTier: caller.plan,
          requiredTier: REST_MIN_PLAN,
        })
      }
      const extra = req.routeOptions.config.route?.rateLimit
      if (extra) await s.limits.hit(extra, apiKeyCredential(caller.keyId!))
    })
  },
  { name: 'notes-rest-authentication' },
)

export interface McpAuth {
  caller: Omit<Caller, 'requestId'>
  /** What the per-credential limits count by: `key:<keyId>` (as REST) or `grant:<grantId>`. */
  limiterKey: string
}

/** `resource`: the endpoint's resource identifier, which an access token's audience must equal. */
export async function authenticateMcp(app: Application, authorization: string | undefined, resource: string): Promise<McpAuth | null> {
  const token = bearerToken(authorization)
  if (!token) return null
  if (looksLikeAccessToken(token)) {
    const a = await app.oauth.authenticateAccessToken(token)
    if (!a || trimSlash(a.resource) !== trimSlash(resource)) return null
    return { caller: { accountId: a.accountId, plan: a.plan, keyId: null, via: 'mcp' }, limiterKey: `grant:${a.grantId}` }
  }
  const a = await app.accounts.authenticate(token)
  return a ? { caller: { accountId: a.accountId, plan: a.plan, keyId: a.keyId, via: 'mcp' }, limiterKey: apiKeyCredential(a.keyId) } : null
}

export function unauthorized(reply: FastifyReply, resourceMetadataUrl: string, tokenSent: boolean) {
  const params = [`resource_metadata="${resourceMetadataUrl}"`, ...(tokenSent ? ['error="invalid_token"', 'error_description="The token is unknown, expired, revoked, or for another resource."'] : [])]
  return reply
    .code(401)
    .header('WWW-Authenticate', `Bearer ${params.join(', ')}`)
    .send(
      errorBody(
        'invalid_api_key',
        tokenSent
          ? 'The API key or access token is not valid (revoked, expired, or mistyped).'
          : 'Send "Authorization: Bearer <API_KEY>", or an OAuth access token (discover the flow from the resource_metadata in WWW-Authenticate).',
      ),
    )
}
