// Browser clients, with @fastify/cors: the MCP endpoints and the OAuth endpoints a browser-based
// MCP client calls (registration, token, revocation) answer CORS for the allowed origins, and
// refuse any other Origin with 403 `origin_not_allowed` (the MCP transport's security guidance:
// servers must validate Origin, against DNS rebinding); the public discovery documents (OAuth
// metadata, MCP info) are readable from any origin. A request without Origin (not a browser) is
// not affected, and paths not listed (REST, the dashboard) get no CORS headers, as before.
// Bearer tokens only, never cookies: no Access-Control-Allow-Credentials.
//
// One registration per listener, choosing by path: @fastify/cors adds an `OPTIONS *` route to
// the context it is registered in, so a second registration on the same host would clash.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import cors, { type FastifyCorsOptions } from '@fastify/cors'
import { DomainError } from '../../domain/errors.ts'

export interface CrossOriginPaths {
  /** Exact paths whose callers' Origin must be allowed (MCP endpoints, OAuth endpoints). */
  checked: string[]
  /** Exact paths anyone may read cross-origin (discovery documents). */
  open: string[]
}

export interface CrossOriginOptions {
  paths: CrossOriginPaths
  /** The configured origins (MCP_ALLOWED_ORIGINS), or '*'. */
  allowedOrigins: string[] | '*'
  /** The service's own origins ({base_url}, {mcp_url}), always allowed. */
  ownOrigins: string[]
}

/** The service's own origins ({base_url}, {mcp_url}), which a browser client may always call from. */
export const ownOrigins = (settings: { publicBaseUrl: string; mcp: { publicUrl: string } }): string[] => [new URL(settings.publicBaseUrl).origin, new URL(settings.mcp.publicUrl).origin]

// The MCP Inspector and local development tools run on loopback origins.
const LOOPBACK = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/

export function originAllowed(origin: string, o: Pick<CrossOriginOptions, 'allowedOrigins' | 'ownOrigins'>): boolean {
  if (o.allowedOrigins === '*') return true
  return o.ownOrigins.includes(origin) || o.allowedOrigins.includes(origin) || LOOPBACK.test(origin)
}

const OFF: FastifyCorsOptions = { origin: false }
const pathOf = (req: FastifyRequest) => req.url.split('?')[0]!

export const crossOrigin = fp<CrossOriginOptions>(
  async (app: FastifyInstance, o) => {
    const checked = new Set(o.paths.checked)
    const open = new Set(o.paths.open)
    const checkedOptions: FastifyCorsOptions = {
      origin: (origin, cb) => {
        if (origin === undefined) return cb(null, false)
        if (originAllowed(origin, o)) return cb(null, origin)
        cb(new DomainError('origin_not_allowed', `Requests from the origin ${origin} are not accepted here; the operator can allow it with MCP_ALLOWED_ORIGINS.`), false)
      },
      methods: ['GET', 'POST', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'],
      exposedHeaders: ['www-authenticate', 'retry-after', 'mcp-session-id'],
      maxAge: 600,
      strictPreflight: false,
    }
    const openOptions: FastifyCorsOptions = { origin: '*', methods: ['GET'], maxAge: 600, strictPreflight: false }
    // Routes not listed are left alone: no Vary: Origin either (a delegator counts as dynamic).
    app.addHook('onRoute', (r) => {
      if (checked.has(r.url) || open.has(r.url) || (r.method === 'OPTIONS' && (r.url === '*' || r.url === '/*'))) return
      r.config = { ...(r.config ?? {}), cors: false } as typeof r.config
    })
    await app.register(cors, {
      delegator: (req, cb) => {
        const path = pathOf(req)
        cb(null, checked.has(path) ? checkedOptions : open.has(path) ? openOptions : OFF)
      },
    })
  },
  { name: 'notes-cross-origin' },
)
