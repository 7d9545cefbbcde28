// A local HTTP server for import tests: each path answers what the test says (bytes, status,
// redirect, or a response held until the test lets it go), and every request is recorded.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Served {
  status?: number
  body?: string | Buffer
  headers?: Record<string, string>
  /** Sent slowly: this many ms between chunks of `chunkBytes`. */
  trickleMs?: number
  chunkBytes?: number
}

export type Route = Served | ((req: IncomingMessage, body: Buffer) => Served | Promise<Served>)

export interface TestHttpServer {
  url(path: string): string
  port: number
  routes: Map<string, Route>
  hits: { method: string; path: string; headers: IncomingMessage['headers']; body: Buffer }[]
  count(path: string): number
  close(): Promise<void>
}

export async function startHttpServer(routes: Record<string, Route> = {}): Promise<TestHttpServer> {
  const table = new Map(Object.entries(routes))
  const hits: TestHttpServer['hits'] = []
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks)
    const path = (req.url ?? '/').split('?')[0]!
    hits.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body })
    const route = table.get(path) ?? table.get(req.url ?? '/')
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' })
      return res.end('not found')
    }
    try {
      const out = typeof route === 'function' ? await route(req, body) : route
      const payload = typeof out.body === 'string' ? Buffer.from(out.body) : (out.body ?? Buffer.alloc(0))
      res.writeHead(out.status ?? 200, { 'content-length': String(payload.length), ...out.headers })
      if (!out.trickleMs) return res.end(payload)
      const step = out.chunkBytes ?? 1024
      for (let i = 0; i < payload.length && !res.destroyed; i += step) {
        res.write(payload.subarray(i, i + step))
        await new Promise((r) => setTimeout(r, out.trickleMs))
      }
      res.end()
    } catch (err) {
      if (!res.headersSent) res.writeHead(500)
      res.end(String(err))
    }
  })
  server.keepAliveTimeout = 100
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    routes: table,
    hits,
    count: (path) => hits.filter((h) => h.path.split('?')[0] === path).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
