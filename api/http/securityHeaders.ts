// The dashboard's security headers: scripts, styles, media and requests from 'self' only, no
// framing, no sniffing, the referrer kept to our own origin. On every response of the context
// it is registered in (a fastify-plugin, so the dashboard's own routes get them).
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

export const dashboardSecurityHeaders = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', async (_req, reply) => {
      reply
        .header('content-security-policy', DASHBOARD_CSP)
        .header('x-frame-options', 'DENY')
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin')
    })
  },
  { name: 'notes-dashboard-security-headers' },
)
