// The two HTTP listeners of the api role, put together: the REST host ({base_url}: REST, the
// OAuth server, the dashboard, and MCP at /mcp/stream) and the {mcp_url} listener. Neither edge
// imports the other; they meet here.
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Application } from '../commands/application.ts'
import { buildApp } from '../api/buildApp.ts'
import { buildMcpApp, mcpBaseRoutes, MCP_BASE_CROSS_ORIGIN } from '../mcp/http.ts'

export interface HttpOptions {
  logger?: FastifyServerOptions['logger']
  /** METRICS_TOKEN: GET /metrics on the REST host for a caller with this bearer token. */
  metricsToken?: string | null
}

/** {base_url}: REST, OAuth, the dashboard, and the MCP endpoint on the same host. */
export const buildRestHost = (app: Application, options: HttpOptions = {}): FastifyInstance => buildApp(app, { ...options, mounts: [mcpBaseRoutes(app)], crossOriginPaths: MCP_BASE_CROSS_ORIGIN })

/** {mcp_url}: the MCP server at its root and the public demo. */
export const buildMcpHost = (app: Application, options: { logger?: boolean | { level: string } } = {}): FastifyInstance => buildMcpApp(app, options)
