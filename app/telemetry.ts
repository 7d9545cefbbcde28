// Metrics and traces of this process (docs/observability.md). Metrics are recorded only when
// someone can read them (METRICS_TOKEN or METRICS_PORT): otherwise the instruments stay no-ops.
// Traces are on when OTEL_EXPORTER_OTLP_ENDPOINT is set; a test may install its own tracer
// (ports/tracing.ts) instead. Both are started before the stores are opened, so the MongoDB and
// kafkajs instrumentations see the drivers load, and every role's instruments exist before the
// first request or event.
import type { Config } from './config.ts'
import { readLog, type EventStore } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { installMetrics, metrics, noopRegistry } from '../ports/metrics.ts'
import { installTracer, noopTracer } from '../ports/tracing.ts'
import type { RunningProjection } from '../projections/runner.ts'
import { READ_MODEL_PROJECTIONS } from './projections.ts'
import { TRANSCRIPTION_JOBS, type TranscriptionJobDoc } from '../projections/transcriptionJobs.ts'
import { LAG_CAP } from './readiness.ts'

export interface Telemetry {
  /** Registers the gauges read from this process's parts at each scrape. */
  watch(parts: { events: EventStore; docs: DocumentStore; projections: readonly RunningProjection[]; roles: ReadonlySet<string> }): void
  close(): Promise<void>
}

export async function startTelemetry(config: Config): Promise<Telemetry> {
  const o = config.observability
  const metricsOn = o.metricsToken !== null || o.metricsPort !== null
  let shutdownTracing = async () => {}
  if (metricsOn) {
    const { prometheusRegistry } = await import('../adapters/prometheus/registry.ts')
    installMetrics(prometheusRegistry({ defaultLabels: { service: o.serviceName } }))
  } else installMetrics(noopRegistry)
  if (o.otlpEndpoint) {
    const { startTracing } = await import('../adapters/opentelemetry/tracing.ts')
    const t = startTracing({ serviceName: o.serviceName })
    installTracer(t.tracer)
    shutdownTracing = async () => {
      installTracer(noopTracer)
      await t.shutdown().catch(() => {})
    }
  }
  return {
    watch(parts) {
      if (metricsOn) watchGauges(parts)
    },
    close: () => shutdownTracing(),
  }
}

/**
 * Projection position and lag: how far each loop of this process got, how many events it has
 * still to apply (counted up to LAG_CAP) and how old the oldest of them is, which is the delay a
 * reader sees. The Kafka forwarder is one of them (analytics-forwarder). Workers add the
 * transcription queue: jobs waiting and the age of the oldest.
 */
function watchGauges(parts: Parameters<Telemetry['watch']>[0]) {
  const r = metrics().registry
  const filters = new Map(READ_MODEL_PROJECTIONS.map((p) => [p.name, p.filter]))
  type Lag = { position: number; behind: number; seconds: number }
  // One read of the log per projection and scrape, shared by the three gauges.
  let pending: Promise<Map<string, Lag>> | null = null
  const lags = () =>
    (pending ??= (async () => {
      const out = new Map<string, Lag>()
      await Promise.all(
        parts.projections.map(async (p) => {
          const position = p.position()
          const ahead = await readLog(parts.events, { after: position, maxCount: LAG_CAP, ...(filters.get(p.name) ? { filter: filters.get(p.name)! } : {}) }).catch(() => null)
          const oldest = ahead?.[0]
          out.set(p.name, { position, behind: ahead?.length ?? NaN, seconds: oldest ? Math.max(0, (Date.now() - Date.parse(oldest.recordedAt)) / 1000) : 0 })
        }),
      )
      return out
    })().finally(() => setTimeout(() => (pending = null), 0)))
  if (parts.projections.length > 0) {
    r.gauge('notes_projection_position', 'Global log position of the last event the projection applied.', ['projection'], async (g) => {
      for (const [name, l] of await lags()) g.set({ projection: name }, l.position)
    })
    r.gauge('notes_projection_behind_events', `Events the projection has yet to apply (counted up to ${LAG_CAP}).`, ['projection'], async (g) => {
      for (const [name, l] of await lags()) g.set({ projection: name }, l.behind)
    })
    r.gauge('notes_projection_lag_seconds', 'Age of the oldest event the projection has yet to apply (0: caught up).', ['projection'], async (g) => {
      for (const [name, l] of await lags()) g.set({ projection: name }, l.seconds)
    })
    r.gauge('notes_projection_up', 'The projection loop is running (1) or retrying, failed, stopped (0).', ['projection', 'state'], (g) => {
      g.reset()
      for (const p of parts.projections) g.set({ projection: p.name, state: p.status().state }, p.status().state === 'running' ? 1 : 0)
    })
  }
  if (parts.roles.has('workers')) {
    const queue = parts.docs.collection<TranscriptionJobDoc>(TRANSCRIPTION_JOBS)
    r.gauge('notes_transcription_queue_depth', 'Transcription jobs by status (queued: waiting, running: leased, settling: failed, credits being given back).', ['status'], async (g) => {
      for (const status of ['queued', 'running', 'settling'] as const) g.set({ status }, await queue.countDocuments({ status }).catch(() => NaN))
    })
    r.gauge('notes_transcription_oldest_job_age_seconds', 'How long the longest-waiting queued job has been due (0: none waiting).', [], async (g) => {
      const [oldest] = await queue.find({ status: 'queued', dueAt: { $lte: new Date().toISOString() } }, { sort: { dueAt: 1 }, limit: 1 }).catch(() => [])
      g.set({}, oldest ? Math.max(0, (Date.now() - Date.parse(oldest.dueAt)) / 1000) : 0)
    })
  }
}
