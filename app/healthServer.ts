// The operator's health listener: every process, whatever its roles, serves GET /healthz
// (alive) and GET /readyz (every check, with the reasons it is not ready) on HEALTH_PORT, bound
// to HEALTH_HOST (127.0.0.1 by default: compose's healthcheck runs inside the container). The
// roles without an API (projections, forwarder, workers) have no other listener, so this is how
// an orchestrator sees them. No token: whoever reaches this port is the operator; the public API
// port shows the detail only with HEALTH_TOKEN (api/http/operatorToken.ts).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Application } from '../commands/application.ts'
import { readinessAnswer } from '../api/buildApp.ts'
import { errorBody, statusOf } from '../api/errors.ts'

export interface HealthServer {
  /** The port it listens on (HEALTH_PORT, or the one given for 0). */
  port: number
  url: string
  close(): Promise<void>
}

export async function startHealthServer(app: Application, options: { port: number; host: string; roles: ReadonlySet<string> }): Promise<HealthServer> {
  const startedAt = Date.now()
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const json = JSON.stringify(body)
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(json)), 'x-content-type-options': 'nosniff', ...headers })
      res.end(json)
    }
    const path = (req.url ?? '/').split('?')[0]
    if (path !== '/healthz' && path !== '/readyz') return send(404, errorBody('not_found', 'The health port serves GET /healthz and GET /readyz.'))
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, errorBody('method_not_allowed', 'Use GET.'), { allow: 'GET, HEAD' })
    if (path === '/healthz') return send(200, { status: 'ok', version: app.settings.version, roles: [...options.roles], uptimeSeconds: Math.round((Date.now() - startedAt) / 1000) })
    readinessAnswer(app, true).then(
      (r) => {
        if (r.ready) return send(200, r.body)
        const retryAfter = r.error.extra.retryAfter
        send(statusOf(r.error.code), errorBody(r.error.code, r.error.message, r.error.extra), typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {})
      },
      (err: unknown) => send(500, errorBody('internal_error', `readiness failed: ${err instanceof Error ? err.message : String(err)}`)),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => (server.off('error', reject), resolve()))
  })
  const { port } = server.address() as AddressInfo
  const shown = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host
  return {
    port,
    url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
