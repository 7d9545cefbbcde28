// Requests that reach a listener after its shutdown began (on a keep-alive connection, or
// pipelined behind one still running) are answered at once with the spec's 503
// `service_unavailable`, a `retryAfter` and `Connection: close`, so a client or load balancer
// retries elsewhere. fastify's own answer there (`return503OnClosing`) is a body of its own shape
// (`{"error":"Service Unavailable","statusCode":503}`), so each listener turns it off
// (`return503OnClosing: false`) and registers this instead.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { errorBody } from '../errors.ts'

export const shuttingDown = fp<{ retryAfterSeconds: number }>(
  async (app: FastifyInstance, { retryAfterSeconds }) => {
    let closing = false
    app.addHook('preClose', async () => void (closing = true))
    app.addHook('onRequest', async (_req, reply) => {
      if (!closing) return
      return reply
        .code(503)
        .header('connection', 'close')
        .header('retry-after', String(retryAfterSeconds))
        .send(errorBody('service_unavailable', `The server is shutting down; retry in ${retryAfterSeconds} s (another instance may answer at once).`, { retryAfter: retryAfterSeconds }))
    })
  },
  { name: 'notes-shutting-down' },
)
