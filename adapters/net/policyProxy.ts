// A forward proxy on loopback that applies the import address policy to every connection a
// child program (yt-dlp) makes: `CONNECT host:port` for https and absolute-form requests for
// plain http. Each one resolves the host through the injected TargetResolver (the same check as
// adapters/net/safeHttp.ts: every address public or allowlisted) and connects to the address it
// checked, so a redirect, a page that names an internal address, or a DNS answer that changes
// between two requests reaches nothing internal. The program never resolves a name itself (an
// HTTP proxy client leaves that to the proxy). One proxy per run; `close` ends every tunnel.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { TargetResolver } from '../../ports/hostResolver.ts'

export interface PolicyProxy {
  /** `http://127.0.0.1:<port>`, for the program's --proxy. */
  url: string
  /** Why each refused connection was refused ("host: reason"), in order. */
  refused: readonly string[]
  close(): Promise<void>
}

// Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own are not forwarded.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade'])

export async function startPolicyProxy(options: { resolveTarget: TargetResolver; connectTimeoutMs: number }): Promise<PolicyProxy> {
  const refused: string[] = []
  const sockets = new Set<Duplex>()
  const track = (s: Duplex) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
  }

  /** The checked address for `url`, or null (and the refusal recorded). */
  async function checked(url: URL): Promise<string | null> {
    if (url.username || url.password) {
      refused.push(`${url.host}: links with credentials are not followed`)
      return null
    }
    const r = await options.resolveTarget(url)
    if (r.ok) return r.addresses[0]!
    refused.push(`${url.hostname}: ${r.reason}`)
    return null
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void forward(req, res).catch(() => res.destroy())
  })

  async function forward(req: IncomingMessage, res: ServerResponse) {
    let url: URL
    try {
      url = new URL(req.url ?? '')
    } catch {
      return res.writeHead(400).end('absolute-form requests only')
    }
    if (url.protocol !== 'http:') return res.writeHead(400).end('only http:// is forwarded; https goes through CONNECT')
    const address = await checked(url)
    if (!address) return res.writeHead(403).end('refused by the address policy')
    const headers: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v
    headers.host = url.host
    const upstream = httpRequest({ host: address, port: Number(url.port || 80), method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false })
    const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), options.connectTimeoutMs)
    upstream.on('socket', (s) => track(s))
    upstream.on('response', (up) => {
      clearTimeout(timer)
      const out: Record<string, string | string[]> = {}
      for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v
      res.writeHead(up.statusCode ?? 502, out)
      up.pipe(res)
    })
    upstream.on('error', () => {
      clearTimeout(timer)
      if (!res.headersSent) res.writeHead(502).end()
      else res.destroy()
    })
    req.pipe(upstream)
  }

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client)
    client.on('error', () => {})
    void tunnel(req.url ?? '', client, head).catch(() => client.destroy())
  })

  async function tunnel(authority: string, client: Socket, head: Buffer) {
    let url: URL
    try {
      url = new URL(`https://${authority}`)
      if (!/:\d+$/.test(authority) || url.pathname !== '/' || url.search) throw new Error('not host:port')
    } catch {
      return client.end('HTTP/1.1 400 Bad Request\r\n\r\n')
    }
    const address = await checked(url)
    if (!address) return client.end('HTTP/1.1 403 Forbidden\r\n\r\n')
    const upstream = connect({ host: address, port: Number(url.port || 443) })
    track(upstream)
    const timer = setTimeout(() => upstream.destroy(), options.connectTimeoutMs)
    upstream.on('connect', () => {
      clearTimeout(timer)
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on('error', () => {
      clearTimeout(timer)
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
    })
    upstream.on('close', () => client.destroy())
    client.on('close', () => upstream.destroy())
  }

  server.on('connection', (s: Socket) => track(s))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
