// Browser clients, with @fastify/cors: the MCP endpoints and the OAuth endpoints a browser-based
// MCP client calls (registration, token, revocation) answer CORS for the allowed origins, and
// refuse any other Origin with 403 `origin_not_allowed` (the MCP transport's security guidance:
// servers must validate Origin, against DNS rebinding); the public discovery documents (OAuth
// metadata, MCP info) are readable from any origin. A request without Origin (not a browser) is
// not affected, and paths not listed (REST, the dashboard) get no CORS headers, as before.
// Bearer tokens only, never cookies: no Access-Control-Allow-Credentials.
//
// One registration per listener (@fastify/cors adds an `OPTIONS *` route to the context it is
// registered in, so a second one on the same host would clash), off by default; the listed
// paths get their CORS options in their route config, which the plugin merges per request.
import type { FastifyInstance, FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import cors, { type FastifyCorsOptions } from '@fastify/cors'
import { DomainError } from '../../domain/errors.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** @fastify/cors per route: its options, or false for none. */
    cors?: FastifyCorsOptions | false
  }
}

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

export function originAllowed(origin: string, options: Pick<CrossOriginOptions, 'allowedOrigins' | 'ownOrigins'>): boolean {
  if (options.allowedOrigins === '*') return true
  return options.ownOrigins.includes(origin) || options.allowedOrigins.includes(origin) || LOOPBACK.test(origin)
}

export const crossOrigin = fp<CrossOriginOptions>(
  async (app: FastifyInstance, o) => {
    const checked: FastifyCorsOptions = {
      origin: (origin, cb) => {
        if (origin === undefined) return cb(null, false)
        if (originAllowed(origin, o)) return cb(null, origin)
        cb(new DomainError('origin_not_allowed', `Requests from the origin ${origin} are not accepted here; the operator can allow it with MCP_ALLOWED_ORIGINS.`), false)
      },
      methods: ['GET', 'POST', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'],
      exposedHeaders: ['www-authenticate', 'retry-after', 'mcp-session-id'],
      maxAge: 600,
    }
    const open: FastifyCorsOptions = { origin: '*', methods: ['GET'], maxAge: 600 }
    const optionsOf = new Map<string, FastifyCorsOptions>([...o.paths.checked.map((p) => [p, checked] as const), ...o.paths.open.map((p) => [p, open] as const)])
    // Each route's CORS in its own config (the plugin merges it over the defaults below), so a
    // route not listed costs one check and gets no header, not even Vary: Origin.
    app.addHook('onRoute', (r) => {
      if (r.config?.cors !== undefined) return
      r.config = { ...(r.config ?? {}), cors: optionsOf.get(r.url) ?? false } as typeof r.config
    })
    // Defaults: off. The plugin's own `OPTIONS *` route then answers 404 as before.
    await app.register(cors, { origin: false, strictPreflight: false })
    // The preflights of the listed paths: the plugin's hook answers them (204, or 403 for an
    // Origin not allowed); without Origin they are 404 as before. Hidden: plumbing, not operations.
    for (const [path, options] of optionsOf) {
      app.options(path, { schema: { hide: true } as FastifySchema, config: { cors: options } }, (_req, reply) => reply.callNotFound())
    }
  },
  { name: 'notes-cross-origin' },
)
