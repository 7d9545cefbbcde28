// Who an MCP request acts for: the bearer token is either an API key (any plan: MCP has no
// plan requirement) or an OAuth access token issued by our authorization server for this very
// endpoint (RFC 8707: {mcp_url} and {base_url}/mcp/stream are two resources, each with its own
// protected resource metadata, so a token for one is refused at the other). The SDK's auth
// helpers are express-only, so this check is ours. A failure is 401 with WWW-Authenticate naming
// the endpoint's protected resource metadata (RFC 9728 section 5.1), which is how an AI client
// discovers the OAuth flow.
import type { FastifyReply } from 'fastify'
import type { Services } from '../app/services.ts'
import type { Caller } from '../commands/context.ts'
import { trimSlash } from '../commands/oauth.ts'
import { looksLikeAccessToken } from '../domain/oauth/tokens.ts'
import { bearerToken } from '../api/auth.ts'
import { apiKeyCredential } from '../api/rateLimit.ts'
import { errorBody } from '../api/errors.ts'

export interface McpAuth {
  caller: Omit<Caller, 'requestId'>
  /** What the per-credential limits count by: `key:<keyId>` (as REST) or `grant:<grantId>`. */
  limiterKey: string
}

/** `resource`: the endpoint's resource identifier, which an access token's audience must equal. */
export async function authenticateMcp(s: Services, authorization: string | undefined, resource: string): Promise<McpAuth | null> {
  const token = bearerToken(authorization)
  if (!token) return null
  if (looksLikeAccessToken(token)) {
    const a = await s.oauth.authenticateAccessToken(token)
    if (!a || trimSlash(a.resource) !== trimSlash(resource)) return null
    return { caller: { accountId: a.accountId, plan: a.plan, keyId: null, via: 'mcp' }, limiterKey: `grant:${a.grantId}` }
  }
  const a = await s.accounts.authenticate(token)
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
