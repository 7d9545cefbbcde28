// The front end's files, built from web/ into web/dist (scripts/build-web.ts; `npm start` and
// `npm test` build it when its sources changed), served by @fastify/static: /app/assets/* are
// content-hashed and cached for good, with ranges, ETag/Last-Modified and the .br/.gz files the
// build writes beside them; every other /app path is the single page's index.html, never cached.
// Security headers (the strict CSP) come from api/http/securityHeaders.ts on every response here.
import type { FastifyInstance, FastifyReply } from 'fastify'
import fastifyStatic from '@fastify/static'
import { access } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorBody } from '../errors.ts'
import { dashboardSecurityHeaders } from '../http/securityHeaders.ts'

export const WEB_DIST = resolve(fileURLToPath(new URL('../../web/dist', import.meta.url)))

// JavaScript as text/javascript (RFC 9239), as the dashboard always served it; the mime table of
// @fastify/send (under @fastify/static) still says application/javascript.
const JS_TYPE = /^application\/javascript\b/

const NOT_BUILT =
  '<!doctype html><html lang="en"><title>Dashboard not built</title><h1>The dashboard is not built</h1><p>Run <code>npm run build:web</code> (or <code>npm start</code>, which builds it) and reload.</p></html>'

export function staticDashboard(dist = WEB_DIST, options: { connectOrigins?: readonly string[] } = {}) {
  return async (app: FastifyInstance) => {
    await app.register(dashboardSecurityHeaders, { connectOrigins: options.connectOrigins ?? [] })
    // Only to send index.html: its own cache header, no ranges needed, but the same preCompressed handling.
    await app.register(fastifyStatic, { root: dist, serve: false, preCompressed: true, cacheControl: false, etag: true, lastModified: true })

    const index = async (reply: FastifyReply) => {
      try {
        await access(join(dist, 'index.html'))
      } catch {
        return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT)
      }
      return reply.header('cache-control', 'no-cache').sendFile('index.html', dist, { cacheControl: false })
    }
    // Browsers ask for an icon on every page (the consent page too); there is none: say so without an error.
    app.get('/favicon.ico', async (_req, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send())
    app.get('/app', async (_req, reply) => reply.redirect('/app/', 302))
    app.get('/app/', async (_req, reply) => index(reply))

    app.register(
      async (assets) => {
        assets.addHook('onSend', async (_req, reply) => {
          if (JS_TYPE.test(String(reply.getHeader('content-type') ?? ''))) reply.header('content-type', 'text/javascript; charset=utf-8')
        })
        assets.setNotFoundHandler((req, reply) => reply.code(404).send(errorBody('not_found', `No file ${req.url.split('?')[0]}.`)))
        // The folder itself is no file (@fastify/static would answer its 403 as an error).
        assets.get('/', async (req, reply) => reply.callNotFound())
        await assets.register(fastifyStatic, {
          root: join(dist, 'assets'),
          prefix: '/',
          decorateReply: false,
          index: false,
          redirect: false,
          dotfiles: 'deny',
          preCompressed: true,
          immutable: true,
          maxAge: 365 * 24 * 3600 * 1000,
        })
      },
      { prefix: '/app/assets' },
    )

    // Client-side routes (/app/keys, /app/notes/<id>, ...): the same page.
    app.get('/app/*', async (req, reply) => {
      const rest = (req.params as { '*': string })['*']
      if (rest.startsWith('api/') || rest.startsWith('assets/')) return reply.code(404).send(errorBody('not_found', 'No such route.'))
      return index(reply)
    })
  }
}
