// The tracing port on OpenTelemetry: the only module that imports @opentelemetry/*. The SDK
// exports spans over OTLP to OTEL_EXPORTER_OTLP_ENDPOINT (OTEL_EXPORTER_OTLP_PROTOCOL, headers and
// the other OTEL_* variables as the SDK reads them), or to the span processors a test gives it.
// Trace context crosses process boundaries in W3C `traceparent` form: HTTP headers in, event
// metadata through the log, Kafka message headers out. The MongoDB instrumentation adds the
// driver's spans (inside a span of ours only) when the driver loads after `startTracing`, as the
// service loads it. Kafka's producer spans are the forwarder's own (projections/analyticsForwarder.ts):
// the kafkajs instrumentation would start each message's span from the context of the batch's
// send call and put that in the header, cutting the message off the trace of its event.
import { context, propagation, trace, SpanKind as OtelKind, SpanStatusCode, type Context, type Span as OtelSpan } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { NodeSDK } from '@opentelemetry/sdk-node'
import type { SpanProcessor } from '@opentelemetry/sdk-trace'
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb'
import { register } from 'node:module'
import type { Span, SpanKind, Tracer, TraceCarrier } from '../../ports/tracing.ts'

const KINDS: Record<SpanKind, OtelKind> = {
  internal: OtelKind.INTERNAL,
  server: OtelKind.SERVER,
  client: OtelKind.CLIENT,
  producer: OtelKind.PRODUCER,
  consumer: OtelKind.CONSUMER,
}

const w3c = new W3CTraceContextPropagator()
const getter = { keys: (c: TraceCarrier) => Object.keys(c), get: (c: TraceCarrier, k: string) => (c as Record<string, string | undefined>)[k] }
const setter = { set: (c: TraceCarrier, k: string, v: string) => ((c as Record<string, string>)[k] = v) }

const carrierOf = (ctx: Context): TraceCarrier => {
  const c: TraceCarrier = {}
  w3c.inject(ctx, c, setter)
  return c
}

function wrap(span: OtelSpan, ctx: Context): Span {
  return {
    setAttributes: (a) => void span.setAttributes(a),
    fail(err) {
      span.recordException(err instanceof Error ? err : String(err))
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) })
    },
    end: () => span.end(),
    run: (fn) => context.with(ctx, fn),
    carrier: () => carrierOf(ctx),
  }
}

export interface RunningTracing {
  tracer: Tracer
  shutdown(): Promise<void>
}

/**
 * Starts the SDK. `serviceName` names the role (notes-api, notes-workers, ...);
 * `spanProcessors` replaces the OTLP exporter (tests pass an in-memory one).
 */
let hooked = false

export function startTracing(options: { serviceName: string; spanProcessors?: SpanProcessor[] }): RunningTracing {
  // The service imports the MongoDB driver as an ES module: the instrumentation sees it only
  // through this loader hook (for that one package), registered before the driver loads.
  if (!hooked) {
    register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: ['mongodb'] } })
    hooked = true
  }
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    textMapPropagator: w3c,
    instrumentations: [new MongoDBInstrumentation()],
    // Traces only: metrics are Prometheus's (GET /metrics), logs stay on the process's output. The
    // SDK would otherwise start OTLP metric and log exporters by default.
    metricReaders: [],
    logRecordProcessors: [],
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
  })
  sdk.start()
  propagation.setGlobalPropagator(w3c)
  const otel = trace.getTracer('notes-service')
  const tracer: Tracer = {
    enabled: true,
    startSpan(name, opts = {}) {
      const parent = opts.parent?.traceparent ? w3c.extract(context.active(), opts.parent, getter) : context.active()
      const span = otel.startSpan(name, { kind: KINDS[opts.kind ?? 'internal'], ...(opts.attributes ? { attributes: opts.attributes } : {}) }, parent)
      return wrap(span, trace.setSpan(parent, span))
    },
    active: () => carrierOf(context.active()),
  }
  return { tracer, shutdown: () => sdk.shutdown() }
}
