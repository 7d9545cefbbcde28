// Requests measured and traced, and GET /metrics for Prometheus behind a bearer token.
// Every answered request counts under its route's pattern (`/v1/notes/:noteId`; `unmatched` for
// paths no route serves, so a scanner cannot blow up the series), method and status, with its
// latency. With tracing on, each request is a server span, the child of the caller's
// `traceparent` header when it sends one; the handler runs inside it, so the command's append
// (adapters/telemetry/eventStore.ts) and what follows it in the log join the same trace.
// A fastify-plugin: it covers the whole listener.
import { timingSafeEqual, createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import { metrics } from '../../ports/metrics.ts'
import { tracer, type Span } from '../../ports/tracing.ts'
import { errorBody } from '../errors.ts'

export interface ObservabilityOptions {
  /** METRICS_TOKEN: GET /metrics answers a caller sending it as a bearer token; null: no /metrics here. */
  metricsToken: string | null
}

const spans = new WeakMap<FastifyRequest, Span>()
const digest = (s: string) => createHash('sha256').update(s).digest()

export const observability = fp<ObservabilityOptions>(
  async (app: FastifyInstance, o) => {
    const t = tracer()
    if (t.enabled) {
      app.addHook('onRequest', (req, _reply, done) => {
        const header = req.headers.traceparent
        const span = t.startSpan(`${req.method} ${req.routeOptions.url ?? 'unmatched'}`, {
          kind: 'server',
          parent: typeof header === 'string' ? { traceparent: header } : null,
          attributes: { 'http.request.method': req.method, 'http.route': req.routeOptions.url ?? 'unmatched', 'notes.request_id': req.id },
        })
        spans.set(req, span)
        done()
      })
      // After the body is parsed: the handler and everything it awaits run inside the span.
      app.addHook('preHandler', (req, _reply, done) => {
        const span = spans.get(req)
        if (span) span.run(done)
        else done()
      })
      // A client that goes away before the answer gets no onResponse: its span ends here.
      app.addHook('onRequestAbort', (req, done) => {
        const span = spans.get(req)
        spans.delete(req)
        span?.setAttributes({ 'notes.aborted': true })
        span?.end()
        done()
      })
    }
    app.addHook('onResponse', (req, reply, done) => {
      const route = req.routeOptions.url ?? 'unmatched'
      const labels = { route, method: req.method, status: reply.statusCode }
      const m = metrics()
      m.httpRequests.inc(labels)
      m.httpDuration.observe(labels, reply.elapsedTime / 1000)
      const span = spans.get(req)
      spans.delete(req)
      if (span) {
        span.setAttributes({ 'http.response.status_code': reply.statusCode })
        if (reply.statusCode >= 500) span.fail(new Error(`HTTP ${reply.statusCode}`))
        span.end()
      }
      done()
    })

    if (o.metricsToken) {
      const expected = digest(o.metricsToken)
      // Hidden: plumbing for operators, not an operation of the contract (GET /v1/openapi.json).
      app.get('/metrics', { schema: { hide: true } as FastifySchema }, async (req, reply) => {
        const auth = req.headers.authorization ?? ''
        const given = auth.startsWith('Bearer ') ? auth.slice(7) : ''
        if (!timingSafeEqual(digest(given), expected)) {
          return reply.code(401).header('WWW-Authenticate', 'Bearer').send(errorBody('invalid_api_key', 'GET /metrics needs the METRICS_TOKEN as a bearer token.'))
        }
        const { contentType, body } = await metrics().registry.render()
        return reply.type(contentType).send(body)
      })
    }
  },
  { name: 'notes-observability' },
)
