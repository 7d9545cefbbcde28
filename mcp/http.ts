// The MCP transports (spec parts 1 and 4): streamable HTTP at POST {base_url}/mcp/stream and, the
// same server, at {mcp_url} (a listener of its own, `buildMcpApp`), plus the public demo at
// {mcp_url}/demo. Stateless: every POST gets a fresh McpServer and transport, mounted in fastify
// with `reply.hijack()`, so any process can answer any request. GET (a standalone SSE stream)
// and DELETE (ending a session) have nothing to do without sessions: 405.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { randomUUID } from 'node:crypto'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { Application } from '../commands/application.ts'
import { demoCaller, type Caller } from '../commands/context.ts'
import { errorBody } from '../api/errors.ts'
import { authenticateMcp, unauthorized, type McpAuth } from '../api/http/authentication.ts'
import { errorHandling, frameworkErrors } from '../api/http/errorHandling.ts'
import { limitPerCredential, memoryStore, type RateLimitStore } from '../api/http/rateLimit.ts'
import { loadShedding } from '../api/http/loadShedding.ts'
import { crossOrigin, ownOrigins, type CrossOriginPaths } from '../api/http/crossOrigin.ts'
import { buildMcpServer } from './server.ts'
import { DEMO_LIMIT, mcpInfo, mcpUrls, protectedResourceMetadata } from './info.ts'

// One set of counters per service instance, shared by both listeners: they are one server.
interface Stores {
  perCredential: RateLimitStore
  demoPerIp: RateLimitStore
}
const stores = new WeakMap<Application, Stores>()
function storesOf(s: Application): Stores {
  let l = stores.get(s)
  if (!l) stores.set(s, (l = { perCredential: memoryStore(), demoPerIp: memoryStore() }))
  return l
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpAuth?: McpAuth
  }
}

/** Hands the request to a fresh stateless MCP server acting for `caller`. */
async function serve(s: Application, req: FastifyRequest, reply: FastifyReply, caller: (requestId: string) => Caller, credential: string, demo: boolean) {
  // Headers the hooks set (CORS) go out on the raw response the transport writes.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value)
  reply.hijack()
  const log = (err: unknown, msg: string) => req.log.error({ err }, msg)
  const server = buildMcpServer(s, { caller, credential, demo, log })
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
  reply.raw.on('close', () => {
    void transport.close()
    void server.close()
  })
  try {
    await server.connect(transport)
    await transport.handleRequest(req.raw, reply.raw, req.body)
  } catch (err) {
    log(err, 'MCP request failed')
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/json' })
      reply.raw.end(JSON.stringify(errorBody('internal_error', 'Something went wrong on our side; quote the requestId if you report it.', { requestId: req.id })))
    }
  }
}

function methodNotAllowed(_req: FastifyRequest, reply: FastifyReply) {
  return reply.code(405).header('Allow', 'POST').send(errorBody('method_not_allowed', 'This MCP endpoint is stateless: POST JSON-RPC messages to it (no standalone SSE stream, no sessions).'))
}

/** An authenticated MCP endpoint at `path`, the resource `resource`; a 401 points at `resourceMetadataUrl`. */
function mcpEndpoint(app: FastifyInstance, s: Application, path: string, resource: string, resourceMetadataUrl: string) {
  app.register(async (scope) => {
    scope.addHook('onRequest', async (req, reply) => {
      if (req.method !== 'POST') return
      const auth = await authenticateMcp(s, req.headers.authorization, resource)
      if (!auth) return unauthorized(reply, resourceMetadataUrl, req.headers.authorization !== undefined)
      req.mcpAuth = auth
    })
    await scope.register(limitPerCredential, {
      max: s.settings.rateLimit.max,
      windowSeconds: s.settings.rateLimit.windowSeconds,
      keyOf: (req) => req.mcpAuth!.limiterKey,
      message: (retryAfter) => `Too many requests for this credential; retry in ${retryAfter} s.`,
      store: storesOf(s).perCredential,
    })
    scope.post(path, async (req, reply) => {
      const auth = req.mcpAuth!
      return serve(s, req, reply, (requestId) => ({ ...auth.caller, requestId }), auth.limiterKey, false)
    })
    scope.get(path, { config: { rateLimit: false } }, methodNotAllowed)
    scope.delete(path, { config: { rateLimit: false } }, methodNotAllowed)
  })
}

/**
 * The public demo: no key, read-only tools over the sample library, 10 requests per 10 minutes
 * per IP. One JSON-RPC message per request: a batch would carry any number of tool calls in one
 * counted request (the MCP protocol of 2025-06-18 has no batches either).
 */
function demoEndpoint(app: FastifyInstance, s: Application, path: string) {
  app.register(async (scope) => {
    // Whatever the request carries (an API key, a token), the demo acts for the sample library only.
    await scope.register(limitPerCredential, {
      max: DEMO_LIMIT.requests,
      windowSeconds: DEMO_LIMIT.windowSeconds,
      keyOf: (req) => req.ip,
      message: (retryAfter) =>
        `The demo allows ${DEMO_LIMIT.requests} requests per ${DEMO_LIMIT.windowSeconds / 60} minutes per IP address; retry in ${retryAfter} s, or use your own API key at the main endpoint.`,
      store: storesOf(s).demoPerIp,
    })
    scope.post(path, async (req, reply) => {
      if (Array.isArray(req.body)) {
        return reply.code(400).send(errorBody('invalid_request', `The demo takes one JSON-RPC message per request, not a batch: each counts against its ${DEMO_LIMIT.requests} requests per ${DEMO_LIMIT.windowSeconds / 60} minutes.`))
      }
      return serve(s, req, reply, demoCaller, `demo:${req.ip}`, true)
    })
    scope.get(path, { config: { rateLimit: false } }, methodNotAllowed)
    scope.delete(path, { config: { rateLimit: false } }, methodNotAllowed)
  })
}

/** fastify's trustProxy; a hop count becomes the function it stands for. */
const trustProxy = (t: boolean | number | string): boolean | string | ((address: string, hop: number) => boolean) =>
  typeof t === 'number' ? (_address, hop) => hop < t : t

/** CORS on the REST host (api/http/crossOrigin.ts): the endpoint checks Origin, its documents are open. */
export const MCP_BASE_CROSS_ORIGIN: CrossOriginPaths = { checked: ['/mcp/stream'], open: ['/mcp/info', '/.well-known/oauth-protected-resource/mcp/stream'] }
/** CORS on the {mcp_url} listener. */
const MCP_HOST_CROSS_ORIGIN: CrossOriginPaths = { checked: ['/', '/demo'], open: ['/info', '/.well-known/oauth-protected-resource'] }

/** On the REST host: POST /mcp/stream, GET /mcp/info, and the stream's resource metadata. */
export function mcpBaseRoutes(s: Application) {
  return async (app: FastifyInstance) => {
    const u = mcpUrls(s)
    mcpEndpoint(app, s, '/mcp/stream', u.stream, u.streamResourceMetadata)
    app.get('/mcp/info', async () => mcpInfo(s))
    app.get('/.well-known/oauth-protected-resource/mcp/stream', async () => protectedResourceMetadata(s, u.stream))
  }
}

/**
 * The {mcp_url} listener: the MCP server at its root, the demo at /demo, the same info at /info,
 * and the resource metadata at /.well-known/oauth-protected-resource.
 */
export function buildMcpApp(s: Application, options: { logger?: boolean | { level: string } } = {}): FastifyInstance {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: 1024 * 1024, genReqId: () => randomUUID(), trustProxy: trustProxy(s.settings.mcp.trustProxy), frameworkErrors })
  app.register(errorHandling)
  app.register(loadShedding, s.settings.loadShedding)
  app.register(crossOrigin, { paths: MCP_HOST_CROSS_ORIGIN, allowedOrigins: s.settings.mcp.allowedOrigins, ownOrigins: ownOrigins(s.settings) })
  const u = mcpUrls(s)
  mcpEndpoint(app, s, '/', u.mcp, u.mcpResourceMetadata)
  demoEndpoint(app, s, '/demo')
  // Registered as a plugin, so after the kit's plugins above (CORS reads each route as it is added).
  app.register(async (docs) => {
    docs.get('/info', async () => mcpInfo(s))
    docs.get('/.well-known/oauth-protected-resource', async () => protectedResourceMetadata(s, u.mcp))
  })
  return app
}
