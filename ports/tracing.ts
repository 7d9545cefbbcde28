// The tracing port: spans, and the trace context carried from one part to the next in W3C
// `traceparent` form (HTTP headers, event metadata, Kafka headers). The OpenTelemetry adapter
// (adapters/opentelemetry/tracing.ts) implements it when OTEL_EXPORTER_OTLP_ENDPOINT is set;
// otherwise every span is a no-op and nothing is carried.
//
// Correlation and causation ids travel next to the trace, with or without tracing: every event
// appended records the request or event that caused it (`causationId`) and the first one of the
// chain (`correlationId`). A worker or projection acting on an event runs inside its scope
// (`withCausation`), so what it appends points back to that event.
import { AsyncLocalStorage } from 'node:async_hooks'

/** W3C trace context, as stored in event metadata and sent in headers. */
export interface TraceCarrier {
  traceparent?: string
  tracestate?: string
}

export type SpanKind = 'internal' | 'server' | 'client' | 'producer' | 'consumer'
export type Attributes = Record<string, string | number | boolean>

export interface SpanOptions {
  kind?: SpanKind
  attributes?: Attributes
  /** The parent: an incoming request's headers or an event's metadata; default the active span. */
  parent?: TraceCarrier | null
}

export interface Span {
  setAttributes(attributes: Attributes): void
  /** Marks the span failed with this error. */
  fail(err: unknown): void
  end(): void
  /** Runs `fn` with this span active: spans started inside are its children. */
  run<T>(fn: () => T): T
  /** This span's context, to carry to the next part (event metadata, message headers). */
  carrier(): TraceCarrier
}

export interface Tracer {
  readonly enabled: boolean
  startSpan(name: string, options?: SpanOptions): Span
  /** The active span's context, or an empty carrier. */
  active(): TraceCarrier
}

const noopSpan: Span = {
  setAttributes() {},
  fail() {},
  end() {},
  run: (fn) => fn(),
  carrier: () => ({}),
}

export const noopTracer: Tracer = { enabled: false, startSpan: () => noopSpan, active: () => ({}) }

let current: Tracer = noopTracer

export function installTracer(t: Tracer): void {
  current = t
}
export const tracer = (): Tracer => current

/** Runs `fn` in a span that ends when it settles (failed when it throws). */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const t = current
  if (!t.enabled) return fn(noopSpan)
  const span = t.startSpan(name, options)
  try {
    return await span.run(() => fn(span))
  } catch (err) {
    span.fail(err)
    throw err
  } finally {
    span.end()
  }
}

/** The trace context in an event's (or a document's) metadata, when it carries one. */
export function carrierOf(metadata: Record<string, unknown> | null | undefined): TraceCarrier | null {
  const tp = metadata?.traceparent
  if (typeof tp !== 'string') return null
  const ts = metadata?.tracestate
  return typeof ts === 'string' ? { traceparent: tp, tracestate: ts } : { traceparent: tp }
}

// ---- correlation and causation ------------------------------------------------------------

export interface Causation {
  correlationId: string
  causationId: string
  /** The causing event's trace context: what is appended in this scope continues its trace. */
  trace?: TraceCarrier | null
}

const scope = new AsyncLocalStorage<Causation>()

/** Runs `fn` as caused by `cause`: events appended inside record it. */
export const withCausation = <T>(cause: Causation, fn: () => T): T => scope.run(cause, fn)

/** The scope of an event being handled: caused by it, in its correlation. */
export function causedBy(event: { id: string; metadata: Record<string, unknown> }): Causation {
  const correlationId = typeof event.metadata.correlationId === 'string' ? event.metadata.correlationId : event.id
  return { correlationId, causationId: event.id, trace: carrierOf(event.metadata) }
}

export const currentCausation = (): Causation | undefined => scope.getStore()
