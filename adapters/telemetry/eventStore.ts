// The event store, measured and traced: append and read latency into the metrics port, a span
// per append (a child of the request or event being handled), and on every appended event the
// metadata that lets one follow a request through the log: `correlationId` (the request, or the
// first event, that started the chain), `causationId` (the request or event that caused this
// one) and the append span's `traceparent` when tracing is on. Projections, workers and the
// Kafka forwarder continue the trace from there.
import { categoryOf, readLog, type EventStore, type EventToAppend } from '../../ports/eventStore.ts'
import { metrics } from '../../ports/metrics.ts'
import { currentCausation, tracer, type TraceCarrier } from '../../ports/tracing.ts'

const errorName = (err: unknown) => (err instanceof Error ? err.name : 'Error')

/** The metadata an appended event is stored with: the caller's, plus correlation, causation and trace. */
function withLineage(e: EventToAppend, trace: TraceCarrier): EventToAppend {
  const given = e.metadata ?? {}
  const cause = currentCausation()
  const requestId = typeof given.requestId === 'string' ? given.requestId : undefined
  const lineage: Record<string, unknown> = {
    correlationId: given.correlationId ?? cause?.correlationId ?? requestId ?? e.id,
    ...((given.causationId ?? cause?.causationId ?? requestId) ? { causationId: given.causationId ?? cause?.causationId ?? requestId } : {}),
    ...trace,
  }
  return { ...e, metadata: { ...given, ...lineage } }
}

export function observedEventStore(inner: EventStore): EventStore {
  const timed = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    const m = metrics()
    const started = performance.now()
    try {
      return await call()
    } catch (err) {
      m.eventStoreErrors.inc({ operation, error: errorName(err) })
      throw err
    } finally {
      m.eventStoreDuration.observe({ operation }, (performance.now() - started) / 1000)
    }
  }
  return {
    async appendToStream(streamName, events, options) {
      const t = tracer()
      // Inside a span (a request, a worker's job) the append is its child; otherwise it continues
      // the trace of the event being acted on, if any.
      const parent = t.enabled && !t.active().traceparent ? (currentCausation()?.trace ?? null) : null
      const span = t.enabled ? t.startSpan('eventstore append', { kind: 'client', parent, attributes: { 'notes.stream': streamName, 'notes.events': events.length, 'notes.event_types': [...new Set(events.map((e) => e.type))].join(',') } }) : null
      const carrier = span ? span.carrier() : {}
      try {
        const result = await timed('append', () => inner.appendToStream(streamName, events.map((e) => withLineage(e, carrier)), options))
        if (categoryOf(streamName) === 'credits') for (const e of events) metrics().creditOperations.inc({ kind: e.type })
        span?.setAttributes({ 'notes.global_position': result.lastGlobalPosition })
        return result
      } catch (err) {
        span?.fail(err)
        throw err
      } finally {
        span?.end()
      }
    },
    readStream: (streamName, options) => timed('readStream', () => inner.readStream(streamName, options)),
    readAll: (options) => timed('readAll', () => inner.readAll(options)),
    readAllRaw: (options) => readLog(inner, options),
    subscribeToAll: (options) => inner.subscribeToAll(options),
    ...(inner.setStreamRetention ? { setStreamRetention: inner.setStreamRetention.bind(inner) } : {}),
    ...(inner.deleteStream ? { deleteStream: inner.deleteStream.bind(inner) } : {}),
    close: () => inner.close(),
  }
}
