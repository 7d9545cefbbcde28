// The MCP transports (spec parts 1 and 4): streamable HTTP at POST {base_url}/mcp/stream and, the
// same server, at {mcp_url} (a listener of its own, `buildMcpApp`), plus the public demo at
// {mcp_url}/demo. Stateless: every POST gets a fresh McpServer and transport, mounted in fastify
// with `reply.hijack()`, so any process can answer any request. GET (a standalone SSE stream)
// and DELETE (ending a session) have nothing to do without sessions: 405.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { randomUUID } from 'node:crypto'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { Services } from '../app/services.ts'
import type { Caller } from '../commands/context.ts'
import { demoCaller } from '../commands/demoDataset.ts'
import { errorBody } from '../api/errors.ts'
import { FixedWindowLimiter } from '../api/rateLimit.ts'
import { authenticateMcp, unauthorized } from './auth.ts'
import { buildMcpServer } from './server.ts'
import { DEMO_LIMIT, mcpInfo, mcpUrls, protectedResourceMetadata } from './info.ts'

interface Limits {
  perCredential: FixedWindowLimiter
  demoPerIp: FixedWindowLimiter
}

// One set of counters per service instance, shared by both listeners: they are one server.
const limits = new WeakMap<Services, Limits>()
function limitsOf(s: Services): Limits {
  let l = limits.get(s)
  if (!l) {
    l = { perCredential: new FixedWindowLimiter(s.config.rateLimit.max, s.config.rateLimit.windowSeconds), demoPerIp: new FixedWindowLimiter(DEMO_LIMIT.requests, DEMO_LIMIT.windowSeconds) }
    limits.set(s, l)
  }
  return l
}

/**
 * How many JSON-RPC messages a POST carries: a batch (an array) counts each of its messages, so
 * a limit of N requests cannot be stretched to N batches of a hundred calls each.
 */
const messagesIn = (body: unknown) => (Array.isArray(body) ? Math.max(1, body.length) : 1)

function tooMany(reply: FastifyReply, retryAfter: number, message: string) {
  return reply.code(429).header('Retry-After', String(retryAfter)).send(errorBody('rate_limit_exceeded', message, { retryAfter }))
}

/** Hands the request to a fresh stateless MCP server acting for `caller`. */
async function serve(s: Services, req: FastifyRequest, reply: FastifyReply, caller: (requestId: string) => Caller, credential: string, demo: boolean) {
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
function mcpEndpoint(app: FastifyInstance, s: Services, path: string, resource: string, resourceMetadataUrl: string) {
  app.post(path, async (req, reply) => {
    const auth = await authenticateMcp(s, req.headers.authorization, resource)
    if (!auth) return unauthorized(reply, resourceMetadataUrl, req.headers.authorization !== undefined)
    const hit = limitsOf(s).perCredential.hit(auth.limiterKey, messagesIn(req.body))
    if (!hit.ok) return tooMany(reply, hit.retryAfter, `Too many requests for this credential (a batch counts each message); retry in ${hit.retryAfter} s.`)
    return serve(s, req, reply, (requestId) => ({ ...auth.caller, requestId }), auth.limiterKey, false)
  })
  app.get(path, methodNotAllowed)
  app.delete(path, methodNotAllowed)
}

/** The public demo: no key, read-only tools over the sample library, 10 requests (JSON-RPC messages) per 10 minutes per IP. */
function demoEndpoint(app: FastifyInstance, s: Services, path: string) {
  app.post(path, async (req, reply) => {
    // Whatever the request carries (an API key, a token), the demo acts for the sample library only.
    const hit = limitsOf(s).demoPerIp.hit(req.ip, messagesIn(req.body))
    if (!hit.ok) {
      return tooMany(
        reply,
        hit.retryAfter,
        `The demo allows ${DEMO_LIMIT.requests} requests per ${DEMO_LIMIT.windowSeconds / 60} minutes per IP address (each JSON-RPC message of a batch counts as one); retry in ${hit.retryAfter} s, or use your own API key at the main endpoint.`,
      )
    }
    return serve(s, req, reply, demoCaller, `demo:${req.ip}`, true)
  })
  app.get(path, methodNotAllowed)
  app.delete(path, methodNotAllowed)
}

/** fastify's trustProxy; a hop count becomes the function it stands for. */
const trustProxy = (t: boolean | number | string): boolean | string | ((address: string, hop: number) => boolean) =>
  typeof t === 'number' ? (_address, hop) => hop < t : t

/** On the REST host: POST /mcp/stream, GET /mcp/info, and the stream's resource metadata. */
export function mcpBaseRoutes(s: Services) {
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
export function buildMcpApp(s: Services, options: { logger?: boolean | { level: string } } = {}): FastifyInstance {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: 1024 * 1024, genReqId: () => randomUUID(), trustProxy: trustProxy(s.config.mcp.trustProxy) })
  const u = mcpUrls(s)
  mcpEndpoint(app, s, '/', u.mcp, u.mcpResourceMetadata)
  demoEndpoint(app, s, '/demo')
  app.get('/info', async () => mcpInfo(s))
  app.get('/.well-known/oauth-protected-resource', async () => protectedResourceMetadata(s, u.mcp))
  app.setNotFoundHandler((req, reply) => reply.code(404).send(errorBody('not_found', `No route ${req.method} ${req.url.split('?')[0]}.`)))
  app.setErrorHandler((err, req, reply) => {
    const status = (err as { statusCode?: number }).statusCode ?? 500
    if (status >= 400 && status < 500) return reply.code(400).send(errorBody('invalid_request', `Invalid request: ${(err as Error).message}`))
    req.log.error({ err }, 'request failed')
    return reply.code(500).send(errorBody('internal_error', 'Something went wrong on our side; quote the requestId if you report it.', { requestId: req.id }))
  })
  return app
}
