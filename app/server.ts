// Composition root: opens the adapters from the configuration and starts the roles this
// process runs (api, projections, workers, forwarder).
import type { Config } from './config.ts'
import { openDocumentStore, openEventStore } from './infrastructure.ts'
import { createServices, type Services } from './services.ts'
import { startWorkers, type RunningWorker } from './workers.ts'
import { startProjection, type RunningProjection } from '../projections/runner.ts'
import { READ_MODEL_PROJECTIONS } from './projections.ts'
import { buildMcpHost, buildRestHost } from './http.ts'
import { seedDemoDataset } from './demoDataset.ts'
import { ffprobeMediaProbe } from '../adapters/ffprobe/mediaProbe.ts'
import { systemResolver } from '../adapters/net/dnsResolver.ts'
import type { FastifyInstance } from 'fastify'

export interface RunningService {
  services: Services
  app: FastifyInstance | null
  /** The {mcp_url} listener (role api). */
  mcpApp: FastifyInstance | null
  baseUrl: string
  close(): Promise<void>
}

export async function startService(config: Config, log: (msg: string) => void = console.log): Promise<RunningService> {
  const events = await openEventStore(config)
  const docs = await openDocumentStore(config)
  const running: RunningProjection[] = []
  if (config.roles.has('projections')) {
    for (const p of READ_MODEL_PROJECTIONS) running.push(startProjection(p, { events, docs }))
  }
  let closePublisher = async () => {}
  if (config.roles.has('forwarder') && config.kafkaBrokers.length > 0) {
    const { openKafkaPublisher } = await import('../adapters/kafka/kafkaPublisher.ts')
    const { startAnalyticsForwarder } = await import('../projections/analyticsForwarder.ts')
    // Starts even when Kafka is down: it retries with backoff and logs each state change once;
    // kafkajs' own per-attempt errors are dropped while the broker is known to be unreachable.
    const forwarder = startAnalyticsForwarder(
      (state) =>
        openKafkaPublisher({
          brokers: config.kafkaBrokers,
          clientId: 'notes-forwarder',
          log: (level, message) => {
            if (state() === 'up') console.error(`[kafkajs] ${level}: ${message}`)
          },
        }),
      { topicPrefix: config.kafkaTopicPrefix, personalTopics: config.analyticsPersonalTopics, log, run: { events, docs } },
    )
    running.push(forwarder)
    closePublisher = () => forwarder.publisher.close()
    log(`forwarding events to Kafka at ${config.kafkaBrokers.join(',')} (topics ${config.kafkaTopicPrefix}<category>)`)
  }
  const services = createServices(config, { events, docs, probe: ffprobeMediaProbe(), resolver: systemResolver, projections: running })
  const workers: RunningWorker[] = config.roles.has('workers') ? startWorkers(services) : []
  const app = config.roles.has('api') ? buildRestHost(services, { logger: { level: config.logLevel } }) : null
  const mcpApp = config.roles.has('api') ? buildMcpHost(services, { logger: { level: config.logLevel } }) : null
  if (app && mcpApp) {
    // The demo endpoint's sample library, written once; later starts find it and change nothing.
    await seedDemoDataset(services)
    await app.listen({ port: config.port, host: config.host })
    await mcpApp.listen({ port: config.mcp.port, host: config.mcp.host })
  }
  return {
    services,
    app,
    mcpApp,
    baseUrl: config.publicBaseUrl,
    async close() {
      await app?.close()
      await mcpApp?.close()
      for (const w of workers) await w.stop()
      await services.ingest.engine.close?.()
      for (const p of running) await p.stop()
      await closePublisher()
      await events.close()
      await docs.close()
    },
  }
}
