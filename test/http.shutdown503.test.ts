// Shutdown (issue 31, item 6): a request that reaches a listener after its shutdown began gets
// the spec's 503 `service_unavailable` body with `retryAfter` (fastify's default was
// `{"error":"Service Unavailable","statusCode":503}`), on the REST host and the MCP listener.
import t from 'tap'
import { connect, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { listeningService } from './support/blobStores.ts'
import { buildMcpHost } from '../app/http.ts'

/** Writes `data` on a connection and collects what comes back until the server closes it. */
function rawConnection(port: number): { socket: Socket; received: () => string; ended: Promise<void> } {
  const socket = connect(port, '127.0.0.1')
  let out = ''
  socket.on('data', (d) => (out += d))
  const ended = new Promise<void>((resolve) => (socket.on('close', () => resolve()), socket.on('error', () => resolve())))
  return { socket, received: () => out, ended }
}

async function until<T>(what: string, probe: () => T | undefined | false, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = probe()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/**
 * A request held open (its body not yet complete) keeps the listener draining; once the shutdown
 * began, the rest of its body and a second request go out on the same connection. The second is
 * routed while the listener closes.
 */
async function secondAnswerDuringShutdown(app: FastifyInstance, port: number, hold: { path: string; body: string }, second: string): Promise<{ status: number; headers: string; body: string }> {
  const c = rawConnection(port)
  const body = hold.body
  c.socket.write(`POST ${hold.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 1)}`)
  // The first request has reached the server (its headers are parsed) before the shutdown begins.
  await new Promise((r) => setTimeout(r, 200))
  const closing = app.close()
  await until('the listener to stop taking connections', () => !app.server.listening)
  c.socket.write(`${body.slice(1)}GET ${second} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
  await Promise.race([c.ended, new Promise((r) => setTimeout(r, 15_000))])
  c.socket.destroy()
  await closing
  const responses = c.received().split(/(?=HTTP\/1\.1 \d{3})/)
  const last = responses.at(-1) ?? ''
  const [head, rest = ''] = last.split('\r\n\r\n')
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1] ?? 0), headers: (head ?? '').toLowerCase(), body: rest }
}

t.test('given the REST host is shutting down, when a request arrives on an open connection, then it gets the spec’s 503 body with retryAfter', async (t) => {
  const s = await listeningService()
  t.teardown(() => s.close().catch(() => {}))
  const port = Number(new URL(s.baseUrl).port)
  const r = await secondAnswerDuringShutdown(s.app, port, { path: '/v1/folders', body: '{"name":"held open"}' }, '/v1/openapi.json')
  t.equal(r.status, 503)
  t.match(r.headers, /retry-after: 10/)
  t.same(Object.keys(JSON.parse(r.body)).sort(), ['error', 'message', 'retryAfter'])
  t.match(JSON.parse(r.body), { error: 'service_unavailable', retryAfter: 10, message: /shutting down/ })
})

t.test('given the MCP listener is shutting down, when a request arrives on an open connection, then it gets the spec’s 503 body', async (t) => {
  const s = await listeningService()
  t.teardown(() => s.close().catch(() => {}))
  const mcp = buildMcpHost(s.services)
  await mcp.listen({ port: 0, host: '127.0.0.1' })
  const port = (mcp.server.address() as { port: number }).port
  const r = await secondAnswerDuringShutdown(mcp, port, { path: '/', body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }, '/info')
  t.equal(r.status, 503)
  t.match(JSON.parse(r.body), { error: 'service_unavailable', retryAfter: 10 })
})
