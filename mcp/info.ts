// The documents that describe the MCP server: GET {base_url}/mcp/info (name, version, tools with
// their cost classes, auth methods) and the protected resource metadata (RFC 9728) of each MCP
// endpoint, which names the authorization server.
import type { Application } from '../commands/application.ts'
import { COST_CLASSES, TOOL_COSTS } from '../domain/mcp/tools.ts'
import { OAUTH_LIFETIMES, OAUTH_SCOPES, PKCE_METHODS } from '../domain/oauth/tokens.ts'
import type { McpInfo } from '../contract/mcp.ts'
import type { ProtectedResourceMetadata } from '../contract/oauth.ts'
import { MCP_SERVER_NAME, toolsFor } from './server.ts'
import { TOOLS } from './tools/index.ts'

export const DEMO_LIMIT = { requests: 10, windowSeconds: 600 } as const

/** Where each MCP endpoint and its metadata live. */
export function mcpUrls(app: Application) {
  const base = app.settings.publicBaseUrl
  const mcp = app.settings.mcp.publicUrl
  return {
    stream: `${base}/mcp/stream`,
    info: `${base}/mcp/info`,
    mcp,
    demo: `${mcp}/demo`,
    /** RFC 9728 section 3.1: the well-known path is inserted before the resource's path. */
    streamResourceMetadata: `${base}/.well-known/oauth-protected-resource/mcp/stream`,
    mcpResourceMetadata: `${mcp}/.well-known/oauth-protected-resource`,
    authorizationServer: base,
    authorizationServerMetadata: `${base}/.well-known/oauth-authorization-server`,
  }
}

export function mcpInfo(app: Application): McpInfo {
  const u = mcpUrls(app)
  const demoTools = new Set(toolsFor(true).map((t) => t.name))
  return {
    name: MCP_SERVER_NAME,
    version: app.settings.version,
    protocol: { transport: 'streamable-http', stateless: true },
    endpoints: { stream: u.stream, mcp: u.mcp, demo: u.demo, info: u.info },
    tools: TOOLS.map((t) => {
      const { costClass, price } = TOOL_COSTS[t.name]
      return {
        name: t.name,
        title: t.title,
        description: t.description,
        costClass,
        cost: COST_CLASSES[costClass],
        credits: price ? { amount: price.credits, per: price.per, operation: price.operation, ...(price.note ? { note: price.note } : {}) } : null,
        readOnly: t.readOnly,
        demo: demoTools.has(t.name),
      }
    }),
    auth: {
      methods: [
        { type: 'api_key', header: 'Authorization: Bearer <API_KEY>', plans: 'every plan (the REST API needs pro; MCP does not)' },
        {
          type: 'oauth2',
          authorizationServer: u.authorizationServer,
          authorizationServerMetadata: u.authorizationServerMetadata,
          protectedResourceMetadata: [u.mcpResourceMetadata, u.streamResourceMetadata],
          grantTypes: ['authorization_code', 'refresh_token'],
          pkce: [...PKCE_METHODS],
          scopes: [...OAUTH_SCOPES],
          accessTokenSeconds: OAUTH_LIFETIMES.accessSeconds,
          refreshTokenSeconds: OAUTH_LIFETIMES.refreshSeconds,
          grantSeconds: OAUTH_LIFETIMES.grantSeconds,
        },
        { type: 'none', endpoint: u.demo, note: 'the public demo: read-only tools over a sample library' },
      ],
    },
    demo: { url: u.demo, readOnly: true, limit: { requests: DEMO_LIMIT.requests, windowSeconds: DEMO_LIMIT.windowSeconds, per: 'ip' } },
  }
}

export function protectedResourceMetadata(app: Application, resource: string): ProtectedResourceMetadata {
  const u = mcpUrls(app)
  return {
    resource,
    authorization_servers: [u.authorizationServer],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: `${MCP_SERVER_NAME} MCP server`,
    resource_documentation: u.info,
  }
}
