// The bearer check every /v1 route runs before anything else (spec parts 4 and 5): a live API
// key (401 otherwise), the per-key rate limit (429), then the plan (403 below Pro). It runs on
// `onRequest`, before the body is parsed, so an anonymous caller learns nothing about the body.
import type { FastifyInstance } from 'fastify'
import { randomUUID } from 'node:crypto'
import { DomainError } from '../domain/errors.ts'
import { REST_MIN_PLAN, planAtLeast } from '../domain/credits/plans.ts'
import type { AccountCommands } from '../commands/accounts.ts'
import { FixedWindowLimiter, apiKeyCredential, type OperationLimits } from '../commands/operationLimits.ts'

export interface RestAuthOptions {
  accounts: AccountCommands
  rateLimit: { max: number; windowSeconds: number }
  /** The per-operation limits, shared with the MCP tools of the same operations. */
  limits: OperationLimits
}

export const bearerToken = (header: string | undefined): string | null => /^Bearer +([^\s]+) *$/i.exec(header ?? '')?.[1] ?? null

export function restAuth(app: FastifyInstance, { accounts, rateLimit, limits }: RestAuthOptions) {
  const perKey = new FixedWindowLimiter(rateLimit.max, rateLimit.windowSeconds)

  app.addHook('onRequest', async (req, reply) => {
    const token = bearerToken(req.headers.authorization)
    const auth = token ? await accounts.authenticate(token) : null
    if (!auth) {
      reply.header('WWW-Authenticate', 'Bearer realm="notes-api"')
      throw new DomainError('invalid_api_key', token ? 'The API key is not valid (revoked, mistyped, or not an API key).' : 'Send an API key as "Authorization: Bearer <API_KEY>".')
    }
    const limited = perKey.hit(auth.keyId)
    if (!limited.ok) throw new DomainError('rate_limit_exceeded', `Too many requests for this API key; retry in ${limited.retryAfter} s.`, { retryAfter: limited.retryAfter })
    if (!planAtLeast(auth.plan, REST_MIN_PLAN)) {
      throw new DomainError('tier_upgrade_required', `The REST API needs the ${REST_MIN_PLAN} plan or higher; this account is on ${auth.plan}. MCP works on every plan.`, {
        currentTier: auth.plan,
        requiredTier: REST_MIN_PLAN,
      })
    }
    const extra = req.routeOptions.config.route?.rateLimit
    if (extra) limits.hit(extra, apiKeyCredential(auth.keyId))
    req.caller = { accountId: auth.accountId, plan: auth.plan, keyId: auth.keyId, requestId: String(req.id ?? randomUUID()), via: 'rest' }
  })
}
