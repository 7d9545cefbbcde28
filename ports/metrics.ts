// The metrics port: counters, histograms and gauges, and the service's catalogue of them. The
// Prometheus adapter (adapters/prometheus/registry.ts) implements the registry; until a process
// installs one (app/telemetry.ts), every instrument is a no-op, so tests and tools that never
// ask for metrics pay nothing. One registry per process, like a logger: each role exposes what
// it measures itself.

export type Labels = Readonly<Record<string, string | number>>

export interface Counter {
  inc(labels?: Labels, value?: number): void
}
export interface Histogram {
  /** Seconds, for the latency histograms. */
  observe(labels: Labels, value: number): void
}
export interface Gauge {
  set(labels: Labels, value: number): void
  /** Forgets every labelled value (before a collector sets the current ones). */
  reset(): void
}

export interface MetricsRegistry {
  counter(name: string, help: string, labelNames: readonly string[]): Counter
  histogram(name: string, help: string, labelNames: readonly string[], buckets?: readonly number[]): Histogram
  /** `collect` runs at each scrape, before the values are read (gauges read from the stores). */
  gauge(name: string, help: string, labelNames: readonly string[], collect?: (gauge: Gauge) => Promise<void> | void): Gauge
  /** The exposition text of everything registered. */
  render(): Promise<{ contentType: string; body: string }>
}

const noopCounter: Counter = { inc() {} }
const noopHistogram: Histogram = { observe() {} }
const noopGauge: Gauge = { set() {}, reset() {} }

export const noopRegistry: MetricsRegistry = {
  counter: () => noopCounter,
  histogram: () => noopHistogram,
  gauge: () => noopGauge,
  render: async () => ({ contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' }),
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const RTF_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 4]

/** The instruments the code records into; the gauges read from the stores are registered by app/telemetry.ts. */
export interface ServiceMetrics {
  registry: MetricsRegistry
  /** route: the route's pattern (`/v1/notes/:noteId`), never the raw path, so the series stay few. */
  httpRequests: Counter
  httpDuration: Histogram
  /** operation: append, readStream, readAll. */
  eventStoreDuration: Histogram
  eventStoreErrors: Counter
  /** Events appended to `credits-*` streams, by event type (CreditsCharged, CreditsRefunded, ...). */
  creditOperations: Counter
  projectionEvents: Counter
  projectionErrors: Counter
  kafkaPublished: Counter
  kafkaPublishFailures: Counter
  /** outcome: succeeded, or the job's errorCode. */
  transcriptionJobs: Counter
  /** Processing time over audio duration: below 1 is faster than real time. */
  speechRealTimeFactor: Histogram
  /** outcome: delivered, retry (failed, tried again), failed (out of retries), cancelled (endpoint deleted). */
  webhookDeliveries: Counter
}

function catalogue(r: MetricsRegistry): ServiceMetrics {
  return {
    registry: r,
    httpRequests: r.counter('notes_http_requests_total', 'HTTP requests answered, by route, method and status.', ['route', 'method', 'status']),
    httpDuration: r.histogram('notes_http_request_duration_seconds', 'HTTP request latency, by route, method and status.', ['route', 'method', 'status'], LATENCY_BUCKETS),
    eventStoreDuration: r.histogram('notes_event_store_duration_seconds', 'Event store call latency, by operation (append, readStream, readAll).', ['operation'], LATENCY_BUCKETS),
    eventStoreErrors: r.counter('notes_event_store_errors_total', 'Event store calls that failed, by operation and error.', ['operation', 'error']),
    creditOperations: r.counter('notes_credit_operations_total', 'Credit ledger events appended by this process, by kind (event type).', ['kind']),
    projectionEvents: r.counter('notes_projection_events_total', 'Events handed to a projection (applied or skipped by it).', ['projection']),
    projectionErrors: r.counter('notes_projection_errors_total', 'Failures of a projection loop (each is retried with backoff).', ['projection']),
    kafkaPublished: r.counter('notes_kafka_messages_published_total', 'Analytics messages the Kafka broker acknowledged.', []),
    kafkaPublishFailures: r.counter('notes_kafka_publish_failures_total', 'Kafka connection or publish attempts that failed (each is retried).', ['stage']),
    transcriptionJobs: r.counter('notes_transcription_jobs_total', 'Transcription attempts finished by this worker, by outcome: succeeded, or the errorCode (a retriable one is tried again).', ['outcome']),
    speechRealTimeFactor: r.histogram('notes_speech_real_time_factor', 'Speech recognition time over audio duration, per job (below 1: faster than real time).', ['engine'], RTF_BUCKETS),
    webhookDeliveries: r.counter('notes_webhook_deliveries_total', 'Webhook delivery attempts, by outcome.', ['outcome']),
  }
}

let current: ServiceMetrics = catalogue(noopRegistry)

/** Makes `registry` this process's: every instrument from now on records into it. */
export function installMetrics(registry: MetricsRegistry): ServiceMetrics {
  current = catalogue(registry)
  return current
}

/** The process's instruments (no-ops until a registry is installed). */
export const metrics = (): ServiceMetrics => current
