// Load shedding with @fastify/under-pressure: while the event loop lags more than the configured
// delay (MAX_EVENT_LOOP_DELAY_MS), every request is answered at once with 503
// `service_unavailable`, a `retryAfter` in the body and the Retry-After header, instead of
// queueing behind the work already late. GET /healthz is exempt: a loaded process is alive, and
// an orchestrator must not restart it for being busy. A fastify-plugin: it covers the listener.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import { errorBody } from '../errors.ts'

export interface LoadSheddingOptions {
  /** 0 turns the check off. */
  maxEventLoopDelayMs: number
  retryAfterSeconds: number
  /** How often the event loop delay is sampled (the plugin's default: every second). */
  sampleIntervalMs?: number
}

const EXEMPT = new Set(['/healthz'])

export const loadShedding = fp<LoadSheddingOptions>(
  async (app: FastifyInstance, o) => {
    if (o.maxEventLoopDelayMs <= 0) return
    await app.register(underPressure, {
      maxEventLoopDelay: o.maxEventLoopDelayMs,
      retryAfter: o.retryAfterSeconds,
      ...(o.sampleIntervalMs ? { sampleInterval: o.sampleIntervalMs } : {}),
      pressureHandler: (req, reply, type, value) => {
        if (EXEMPT.has(req.url.split('?')[0]!)) return undefined
        // No sample at all in the interval (the loop was blocked throughout) reads as Infinity.
        const why = type !== 'eventLoopDelay' ? `of ${type}` : Number.isFinite(value) ? `its event loop lags ${Math.round(Number(value))} ms` : 'its event loop is blocked'
        reply.code(503).header('Retry-After', String(o.retryAfterSeconds))
        // A value returned here is what the plugin sends, ending the request before any other hook
        // (its types say void; index.js handlePressure sends a non-null result).
        return errorBody('service_unavailable', `The server is overloaded (${why}); retry in ${o.retryAfterSeconds} s.`, { retryAfter: o.retryAfterSeconds }) as unknown as void
      },
    })
  },
  { name: 'notes-load-shedding' },
)
