// The metrics port on prom-client: the only module that imports it. Each call makes its own
// Registry (no global default registry), with the process metrics (CPU, memory, event-loop lag,
// GC) that prom-client collects for Node (notes_process_*, notes_nodejs_*).
import client from 'prom-client'
import type { Counter, Gauge, Histogram, Labels, MetricsRegistry } from '../../ports/metrics.ts'

export function prometheusRegistry(options: { defaultLabels?: Record<string, string> } = {}): MetricsRegistry {
  const registry = new client.Registry()
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels)
  client.collectDefaultMetrics({ register: registry, prefix: 'notes_' })
  return {
    counter(name, help, labelNames): Counter {
      const c = new client.Counter({ name, help, labelNames: [...labelNames], registers: [registry] })
      return { inc: (labels?: Labels, value = 1) => (labels ? c.inc(labels, value) : c.inc(value)) }
    },
    histogram(name, help, labelNames, buckets): Histogram {
      const h = new client.Histogram({ name, help, labelNames: [...labelNames], registers: [registry], ...(buckets ? { buckets: [...buckets] } : {}) })
      return { observe: (labels, value) => h.observe(labels, value) }
    },
    gauge(name, help, labelNames, collect): Gauge {
      let port: Gauge
      const g = new client.Gauge({
        name,
        help,
        labelNames: [...labelNames],
        registers: [registry],
        ...(collect ? { collect: () => collect(port) } : {}),
      })
      port = { set: (labels, value) => g.set(labels, value), reset: () => g.reset() }
      return port
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() }
    },
  }
}
