// The dashboard's security headers, from @fastify/helmet: no framing (DENY), no sniffing, the
// referrer kept to our own origin, plus helmet's other defaults that cannot break the page
// (Cross-Origin-Resource-Policy same-origin, Origin-Agent-Cluster, X-DNS-Prefetch-Control off,
// X-Download-Options, X-Permitted-Cross-Domain-Policies none, X-XSS-Protection 0). Left out:
// Strict-Transport-Security (the TLS terminator's decision, and meaningless on plain http) and
// Cross-Origin-Opener-Policy (an AI client may open the sign-in in a popup it still talks to).
//
// The CSP (scripts, styles, media and requests from 'self' only, no framing) is sent byte for
// byte as before by the hook below, not by helmet: helmet 8 joins directives with ";" and no
// space (`getHeaderValue` in helmet/index.mjs) and refuses ";" inside a value, so it cannot write
// the header clients and tests already match ("default-src 'self'; script-src 'self'; ...").
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'

/**
 * `connectOrigins`: where else the page may send requests: the blob store's origin, where a
 * browser PUTs an upload's bytes to the presigned URL (an S3 bucket; the local store is 'self').
 */
export const dashboardCsp = (connectOrigins: readonly string[] = []) =>
  [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "media-src 'self'",
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')

export const DASHBOARD_CSP = dashboardCsp()

/** Every response of the context it is registered in (a fastify-plugin: the registering context's own routes too). */
export const dashboardSecurityHeaders = fp<{ connectOrigins?: readonly string[] }>(
  async (app: FastifyInstance, options) => {
    const csp = dashboardCsp(options.connectOrigins)
    await app.register(helmet, {
      global: true,
      contentSecurityPolicy: false,
      frameguard: { action: 'deny' },
      referrerPolicy: { policy: 'same-origin' },
      strictTransportSecurity: false,
      crossOriginOpenerPolicy: false,
      crossOriginEmbedderPolicy: false,
    })
    app.addHook('onRequest', async (_req, reply) => void reply.header('content-security-policy', csp))
  },
  { name: 'notes-dashboard-security-headers' },
)

/**
 * `X-Content-Type-Options: nosniff` on every answer of the REST and MCP servers: a browser
 * renders an export, an error body or a file as the type it is served with, never guesses HTML
 * from its bytes (a transcript line holding markup stays text).
 */
export const noSniff = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', async (_req, reply) => void reply.header('x-content-type-options', 'nosniff'))
  },
  { name: 'notes-nosniff' },
)
