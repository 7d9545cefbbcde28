// The operator listener (METRICS_PORT on METRICS_HOST): GET /metrics of this process, whatever
// its roles, for Prometheus to scrape without a token. It is meant for the operators' network
// only (compose publishes no port for it); the REST host's /metrics needs METRICS_TOKEN instead.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { metrics } from '../ports/metrics.ts'

export interface MetricsListener {
  /** http://host:port of the listener (the port chosen when METRICS_PORT is 0). */
  url: string
  close(): Promise<void>
}

const json = (error: string, message: string) => JSON.stringify({ error, message })

export async function startMetricsListener(port: number, host: string): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(json('not_found', 'This listener serves GET /metrics only.'))
      return
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'application/json', allow: 'GET, HEAD' }).end(json('method_not_allowed', 'GET /metrics only.'))
      return
    }
    metrics()
      .registry.render()
      .then(({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body))
      .catch((err: Error) => res.writeHead(503, { 'content-type': 'application/json' }).end(json('service_unavailable', `metrics could not be collected: ${err.message}`)))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => (server.off('error', reject), resolve()))
  })
  const a = server.address() as AddressInfo
  const shown = a.address.includes(':') ? `[${a.address}]` : a.address
  return {
    url: `http://${shown}:${a.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
