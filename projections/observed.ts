// A projection, measured and traced: events handed to it count per projection, and with tracing
// on each event that carries a trace context (adapters/telemetry/eventStore.ts) gets a span of
// the batch that applied it, a child of the event's append, so a request's trace shows when each
// read model took its events in. Events without a context start no trace.
import { metrics } from '../ports/metrics.ts'
import { carrierOf, tracer, type Span } from '../ports/tracing.ts'
import type { Projection } from './runner.ts'

export function observed(projection: Projection): Projection {
  return {
    name: projection.name,
    ...(projection.filter ? { filter: projection.filter } : {}),
    collections: projection.collections,
    ...(projection.setup ? { setup: (docs) => projection.setup!(docs) } : {}),
    async handle(events, docs) {
      metrics().projectionEvents.inc({ projection: projection.name }, events.length)
      const t = tracer()
      if (!t.enabled) return projection.handle(events, docs)
      const spans: Span[] = []
      for (const e of events) {
        const parent = carrierOf(e.metadata)
        if (parent) spans.push(t.startSpan(`project ${projection.name}`, { kind: 'consumer', parent, attributes: { 'notes.projection': projection.name, 'notes.event_type': e.type, 'notes.event_id': e.id, 'notes.global_position': e.globalPosition, 'notes.batch_size': events.length } }))
      }
      try {
        // One traced event (the live case): the batch's reads and writes (MongoDB's spans) are its children.
        if (spans.length === 1) await spans[0]!.run(() => projection.handle(events, docs))
        else await projection.handle(events, docs)
      } catch (err) {
        for (const s of spans) s.fail(err)
        throw err
      } finally {
        for (const s of spans) s.end()
      }
    },
  }
}
