// A TCP proxy in front of a MongoDB-wire server (FerretDB here) that counts the request messages
// its clients send: the round trips a process makes to the read-model store. Each wire message
// starts with its total length (int32, little-endian), so the client-to-server stream is cut into
// messages by those lengths; bytes are forwarded untouched. Used by `MIXED=1 bench/api.ts` to
// report round trips per event of the projections process.
import { createServer, connect, type Server, type Socket } from 'node:net'

export interface CountingProxy {
  /** A MongoDB URL through the proxy. */
  readonly url: string
  /** Request messages forwarded so far. */
  requests(): number
  close(): Promise<void>
}

/** Starts a proxy on a free local port in front of `target` (a mongodb:// URL with one host). */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const { hostname, port } = new URL(target.replace(/^mongodb:/, 'http:'))
  let requests = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port || 27017), hostname)
    sockets.add(client).add(upstream)
    let pending = Buffer.alloc(0)
    client.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      // Count every complete message; keep the tail of one cut by the chunk boundary.
      while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
        requests++
        pending = pending.subarray(pending.readInt32LE(0))
      }
      upstream.write(chunk)
    })
    upstream.pipe(client)
    const end = () => (client.destroy(), upstream.destroy(), sockets.delete(client), sockets.delete(upstream))
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const local = (server.address() as { port: number }).port
  const url = new URL(target)
  url.host = `127.0.0.1:${local}`
  // One host, no discovery of the real server's address behind the proxy.
  url.searchParams.set('directConnection', 'true')
  return {
    url: url.toString(),
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
