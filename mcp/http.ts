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
import { clientErrorHandler, errorHandling, frameworkErrors, handleError } from '../api/http/errorHandling.ts'
import { shuttingDown } from '../api/http/shuttingDown.ts'
import { noSniff } from '../api/http/securityHeaders.ts'
import { limitPerCredential, memoryStore, storeFor, type RateLimitStore } from '../api/http/rateLimit.ts'
import { fastifyTrustProxy } from '../api/http/trustProxy.ts'
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
function storesOf(app: Application): Stores {
  let l = stores.get(app)
  if (!l) stores.set(app, (l = { perCredential: storeFor(app, 'mcp'), demoPerIp: storeFor(app, 'demo') }))
  return l
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpAuth?: McpAuth
  }
}

/** Hands the request to a fresh stateless MCP server acting for `caller`. */
async function serve(app: Application, req: FastifyRequest, reply: FastifyReply, caller: (requestId: string) => Caller, credential: string, demo: boolean) {
  // Headers the hooks set (CORS) go out on the raw response the transport writes.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value)
  reply.hijack()
  const log = (err: unknown, msg: string) => req.log.error({ err }, msg)
  const server = buildMcpServer(app, { caller, credential, demo, log })
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

// Bodies fastify cannot parse as JSON never reach the MCP transport: answer them as JSON-RPC
// does (parse error -32700, id null), as the transport answers a body that is JSON but no message.
const UNPARSABLE = new Set(['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_EMPTY_JSON_BODY'])
function jsonRpcErrors(scope: FastifyInstance) {
  scope.setErrorHandler((err: Error & { code?: string }, req, reply) => {
    if (err.code && UNPARSABLE.has(err.code)) {
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'empty body' : 'invalid JSON'}` } })
    }
    return handleError(err, req, reply)
  })
}

function methodNotAllowed(_req: FastifyRequest, reply: FastifyReply) {
  return reply.code(405).header('Allow', 'POST').send(errorBody('method_not_allowed', 'This MCP endpoint is stateless: POST JSON-RPC messages to it (no standalone SSE stream, no sessions).'))
}

/** An authenticated MCP endpoint at `paths`, the resource `resource`; a 401 points at `resourceMetadataUrl`. */
function mcpEndpoint(app: FastifyInstance, application: Application, paths: string[], resource: string, resourceMetadataUrl: string) {
  app.register(async (scope) => {
    jsonRpcErrors(scope)
    scope.addHook('onRequest', async (req, reply) => {
      if (req.method !== 'POST') return
      const auth = await authenticateMcp(application, req.headers.authorization, resource)
      if (!auth) return unauthorized(reply, resourceMetadataUrl, req.headers.authorization !== undefined)
      req.mcpAuth = auth
    })
    await scope.register(limitPerCredential, {
      max: application.settings.rateLimit.max,
      windowSeconds: application.settings.rateLimit.windowSeconds,
      keyOf: (req) => req.mcpAuth!.limiterKey,
      message: (retryAfter) => `Too many requests for this credential; retry in ${retryAfter} s.`,
      store: storesOf(application).perCredential,
    })
    for (const path of paths) {
      scope.post(path, async (req, reply) => {
        const auth = req.mcpAuth!
        return serve(application, req, reply, (requestId) => ({ ...auth.caller, requestId }), auth.limiterKey, false)
      })
      scope.get(path, { config: { rateLimit: false } }, methodNotAllowed)
      scope.delete(path, { config: { rateLimit: false } }, methodNotAllowed)
    }
  })
}

/**
 * The public demo: no key, read-only tools over the sample library, 10 requests per 10 minutes
 * per IP. One JSON-RPC message per request: a batch would carry any number of tool calls in one
 * counted request (the MCP protocol of 2025-06-18 has no batches either).
 */
function demoEndpoint(app: FastifyInstance, application: Application, path: string) {
  app.register(async (scope) => {
    jsonRpcErrors(scope)
    // Whatever the request carries (an API key, a token), the demo acts for the sample library only.
    await scope.register(limitPerCredential, {
      max: DEMO_LIMIT.requests,
      windowSeconds: DEMO_LIMIT.windowSeconds,
      keyOf: (req) => req.ip,
      message: (retryAfter) =>
        `The demo allows ${DEMO_LIMIT.requests} requests per ${DEMO_LIMIT.windowSeconds / 60} minutes per IP address; retry in ${retryAfter} s, or use your own API key at the main endpoint.`,
      store: storesOf(application).demoPerIp,
    })
    scope.post(path, async (req, reply) => {
      if (Array.isArray(req.body)) {
        return reply.code(400).send(errorBody('invalid_request', `The demo takes one JSON-RPC message per request, not a batch: each counts against its ${DEMO_LIMIT.requests} requests per ${DEMO_LIMIT.windowSeconds / 60} minutes.`))
      }
      return serve(application, req, reply, demoCaller, `demo:${req.ip}`, true)
    })
    scope.get(path, { config: { rateLimit: false } }, methodNotAllowed)
    scope.delete(path, { config: { rateLimit: false } }, methodNotAllowed)
  })
}


/** CORS on the REST host (api/http/crossOrigin.ts): the endpoint checks Origin, its documents are open. */
export const MCP_BASE_CROSS_ORIGIN: CrossOriginPaths = { checked: ['/mcp/stream'], open: ['/mcp/info', '/.well-known/oauth-protected-resource/mcp/stream'] }
/** CORS on the {mcp_url} listener. */
const MCP_HOST_CROSS_ORIGIN: CrossOriginPaths = { checked: ['/', '/mcp', '/demo'], open: ['/info', '/.well-known/oauth-protected-resource'] }

/** On the REST host: POST /mcp/stream, GET /mcp/info, and the stream's resource metadata. */
export function mcpBaseRoutes(application: Application) {
  return async (app: FastifyInstance) => {
    const u = mcpUrls(application)
    mcpEndpoint(app, application, ['/mcp/stream'], u.stream, u.streamResourceMetadata)
    app.get('/mcp/info', async () => mcpInfo(application))
    app.get('/.well-known/oauth-protected-resource/mcp/stream', async () => protectedResourceMetadata(application, u.stream))
  }
}

/**
 * The {mcp_url} listener: the MCP server at its root and at /mcp (clients such as the MCP
 * Inspector assume a path ending in /mcp; one resource, so one token serves both), the demo at
 * /demo, the same info at /info, and the resource metadata at /.well-known/oauth-protected-resource.
 */
export function buildMcpApp(application: Application, options: { logger?: boolean | { level: string } } = {}): FastifyInstance {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: 1024 * 1024, genReqId: () => randomUUID(), trustProxy: fastifyTrustProxy(application.settings.mcp.trustProxy), frameworkErrors, clientErrorHandler, return503OnClosing: false })
  app.register(errorHandling)
  app.register(shuttingDown, { retryAfterSeconds: application.settings.loadShedding.retryAfterSeconds })
  app.register(noSniff)
  app.register(loadShedding, application.settings.loadShedding)
  app.register(crossOrigin, { paths: MCP_HOST_CROSS_ORIGIN, allowedOrigins: application.settings.mcp.allowedOrigins, ownOrigins: ownOrigins(application.settings) })
  const u = mcpUrls(application)
  mcpEndpoint(app, application, ['/', '/mcp'], u.mcp, u.mcpResourceMetadata)
  demoEndpoint(app, application, '/demo')
  // In a plugin, like every route here: the error handling's route table (405) sees them, and CORS
  // (registered above) reads each route as it is added.
  app.register(async (docs) => {
    docs.get('/info', async () => mcpInfo(application))
    docs.get('/.well-known/oauth-protected-resource', async () => protectedResourceMetadata(application, u.mcp))
  })
  return app
}
