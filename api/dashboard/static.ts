// The front end's files, built from web/ into web/dist (scripts/build-web.ts; `npm start` and
// `npm test` build it when its sources changed). /app/assets/* are content-hashed and cached for
// good; every other /app path is the single page's index.html, never cached. Headers keep the
// page to its own origin: scripts, styles, media and requests from 'self' only, no framing.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { readFile, stat } from 'node:fs/promises'
import { extname, join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorBody } from '../errors.ts'

export const WEB_DIST = resolve(fileURLToPath(new URL('../../web/dist', import.meta.url)))

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
}

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

function secure(reply: FastifyReply) {
  return reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
}

export function staticDashboard(dist = WEB_DIST) {
  return async (app: FastifyInstance) => {
    const index = async (reply: FastifyReply) => {
      try {
        const html = await readFile(join(dist, 'index.html'))
        return secure(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html)
      } catch {
        return secure(reply)
          .code(503)
          .type('text/html; charset=utf-8')
          .send('<!doctype html><html lang="en"><title>Dashboard not built</title><h1>The dashboard is not built</h1><p>Run <code>npm run build:web</code> (or <code>npm start</code>, which builds it) and reload.</p></html>')
      }
    }
    // Browsers ask for an icon on every page (the consent page too); there is none: say so without an error.
    app.get('/favicon.ico', async (_req, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send())
    app.get('/app', async (_req, reply) => reply.redirect('/app/', 302))
    app.get('/app/', async (_req, reply) => index(reply))
    app.get('/app/assets/*', async (req, reply) => {
      const rel = (req.params as { '*': string })['*']
      const path = resolve(dist, 'assets', rel)
      const missing = () => reply.code(404).send(errorBody('not_found', `No file ${req.url.split('?')[0]}.`))
      if (!path.startsWith(resolve(dist, 'assets') + sep)) return missing()
      try {
        const st = await stat(path)
        if (!st.isFile()) throw new Error('not a file')
        return secure(reply)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .type(TYPES[extname(path)] ?? 'application/octet-stream')
          .send(await readFile(path))
      } catch {
        return missing()
      }
    })
    // Client-side routes (/app/keys, /app/notes/<id>, ...): the same page.
    app.get('/app/*', async (req, reply) => {
      const rest = (req.params as { '*': string })['*']
      if (rest.startsWith('api/')) return reply.code(404).send(errorBody('not_found', 'No such route.'))
      return index(reply)
    })
  }
}
