// Composition root: opens the adapters from the configuration and starts the roles this
// process runs (api, projections, workers, forwarder).
import type { Config } from './config.ts'
import { openDocumentStore, openEventStore, openKeyStores } from './infrastructure.ts'
import { withSharedSecrets } from './sharedSecrets.ts'
import { createServices, type Services } from './services.ts'
import { startWorkers, type RunningWorker } from './workers.ts'
import { rebuildProjection, type Projection, type RunOptions, type RunningProjection } from '../projections/runner.ts'
import { startWatchedProjection } from '../projections/readModelWatch.ts'
import { rebuildInBulk } from '../projections/bulkRebuild.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import type { EventStore } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { leased, type Leased } from '../projections/lease.ts'
import { READ_MODEL_PROJECTIONS } from './projections.ts'
import { buildMcpHost, buildRestHost } from './http.ts'
import { seedDemoDataset } from './demoDataset.ts'
import { ffprobeMediaProbe } from '../adapters/ffprobe/mediaProbe.ts'
import { systemResolver } from '../adapters/net/dnsResolver.ts'
import type { FastifyInstance } from 'fastify'
import { startTelemetry } from './telemetry.ts'
import { startMetricsListener, type MetricsListener } from './metricsListener.ts'
import { observedEventStore } from '../adapters/telemetry/eventStore.ts'
import { observed } from '../projections/observed.ts'
import { metrics } from '../ports/metrics.ts'
import { startHealthServer, type HealthServer } from './healthServer.ts'
import type { ResilientPublisher } from '../projections/analyticsForwarder.ts'

export interface RunningService {
  services: Services
  app: FastifyInstance | null
  /** The {mcp_url} listener (role api). */
  mcpApp: FastifyInstance | null
  baseUrl: string
  /** The operator listener's URL (METRICS_PORT), serving GET /metrics; null when not configured. */
  metricsUrl: string | null
  /** The operator's health listener (HEALTH_PORT), or null. */
  healthUrl: string | null
  close(): Promise<void>
}

/**
 * Empties a read model and replays the log into it. On MongoDB through an in-memory staging
 * store and bulk inserts (every write there is a round trip); the embedded store replays in
 * batches of 2,000 events, one transaction each.
 */
async function rebuildReadModel(config: Config, projection: Projection, events: EventStore, docs: DocumentStore): Promise<number> {
  if (!config.mongoUrl) return rebuildProjection(projection, { events, docs })
  const staging = openEmbeddedDocumentStore({ path: ':memory:' })
  try {
    return await rebuildInBulk(projection, { events, docs, staging })
  } finally {
    await staging.close()
  }
}

/** Whether this process seeds the demo library and account: the single-process start (api and projections together), SEED_DEMO not 0. */
export const seedsDemo = (config: Config): boolean => config.seedDemo && config.roles.has('api') && config.roles.has('projections')

export async function startService(given: Config, log: (msg: string) => void = console.log): Promise<RunningService> {
  // First: the instruments exist, and the drivers load under tracing, before anything runs.
  const telemetry = await startTelemetry(given)
  // Content keys and signing secrets from the stores every process shares (MongoDB at scale), so
  // roles on other hosts seal, open, sign and verify alike; DATA_DIR on one host.
  const keyStores = await openKeyStores(given, log)
  const config = await withSharedSecrets(given, keyStores.secrets)
  const contentKeys = keyStores.contentKeys
  const events = observedEventStore(await openEventStore(config, contentKeys))
  const docs = await openDocumentStore(config, log)
  const running: RunningProjection[] = []
  // On MongoDB several instances may run a projection at once (replicas, a rolling deploy): each
  // takes the projection's lease before it writes, so one writes and the others stand by.
  const leases: Leased[] = []
  const lease = (unobserved: Projection, checkpoint?: (name: string) => Promise<number>): Projection => {
    const p = observed(unobserved)
    if (!config.mongoUrl) return p
    const l = leased(p, docs, { ttlMs: config.leaseTtlSeconds * 1000, ...(checkpoint ? { checkpoint } : {}) })
    leases.push(l)
    return l.projection
  }
  // Every loop is supervised (projections/runner.ts): failures are logged and retried with a
  // jittered backoff; one that cannot recover within LOOP_GIVE_UP_SECONDS ends the process with a
  // non-zero code, so the supervisor (compose's restart policy, systemd, Kubernetes) starts it afresh.
  const supervision: Pick<RunOptions, 'giveUpMs' | 'onGiveUp' | 'onError' | 'batchTimeoutMs' | 'checkpointIdleMs'> = {
    giveUpMs: config.loopGiveUpSeconds * 1000,
    batchTimeoutMs: config.loopBatchTimeoutSeconds * 1000,
    checkpointIdleMs: config.checkpointIdleMs,
    onError: (err, name) => (metrics().projectionErrors.inc({ projection: name }), log(`[loop ${name}] failed, retrying: ${err instanceof Error ? err.message : String(err)}`)),
    onGiveUp: (err, name) => {
      log(`[loop ${name}] could not recover within ${config.loopGiveUpSeconds} s, exiting: ${err instanceof Error ? err.message : String(err)}`)
      process.exit(70)
    },
  }
  if (config.roles.has('projections')) {
    // Watched: a read-model store lost at run time (its checkpoints gone) is rebuilt in bulk, and
    // so is one found without checkpoints at start (projections/readModelWatch.ts).
    for (const p of READ_MODEL_PROJECTIONS) {
      const projection = lease(p)
      const l = leases.find((x) => x.projection === projection)
      running.push(
        startWatchedProjection(projection, {
          events,
          docs,
          ...supervision,
          checkEveryMs: config.readModelCheckMs,
          rebuild: (q) => rebuildReadModel(config, q, events, docs),
          ...(l ? { exclusive: () => l.tryHold() } : {}),
          log,
        }),
      )
    }
  }
  let closePublisher = async () => {}
  let forwarderHandle: { running: RunningProjection; publisher: ResilientPublisher } | null = null
  if (config.roles.has('forwarder') && config.kafkaBrokers.length > 0) {
    const { openKafkaPublisher } = await import('../adapters/kafka/kafkaPublisher.ts')
    const { startAnalyticsForwarder } = await import('../projections/analyticsForwarder.ts')
    // Starts even when Kafka is down: it retries with backoff and logs each state change once,
    // with the error that caused it. kafkajs' own lines are per attempt (a broker going down
    // mid-run gave ~30 while the failing publish was still being retried, before the state could
    // change), so they show only at LOG_LEVEL debug or trace.
    const kafkaDetails = config.logLevel === 'debug' || config.logLevel === 'trace'
    const forwarder = startAnalyticsForwarder(
      (state) =>
        openKafkaPublisher({
          brokers: config.kafkaBrokers,
          clientId: 'notes-forwarder',
          checkpointTopic: config.kafkaCheckpointTopic,
          log: (level, message) => {
            if (kafkaDetails) console.error(`[kafkajs] ${level} (forwarder ${state()}): ${message}`)
          },
        }),
      { topicPrefix: config.kafkaTopicPrefix, personalTopics: config.analyticsPersonalTopics,
        // Its checkpoint lives in Kafka, with what it published: not lost with the read models (docs/health-and-recovery.md).
        checkpointsInBroker: true,
        log,
        run: { events, docs, ...supervision },
        wrap: (p, checkpoints) => lease(p, async (name) => (await checkpoints.read(name)) ?? -1),
      },
    )
    running.push(forwarder)
    forwarderHandle = { running: forwarder, publisher: forwarder.publisher }
    closePublisher = () => forwarder.publisher.close()
    log(`forwarding events to Kafka at ${config.kafkaBrokers.join(',')} (topics ${config.kafkaTopicPrefix}<category>)`)
  }
  const services = createServices(config, { events, docs, probe: ffprobeMediaProbe(), resolver: systemResolver, projections: running, forwarder: forwarderHandle, contentKeys })
  // The operator's health port, before anything that may take long (a rebuild, the demo seed),
  // so an orchestrator sees the process alive and why it is not ready yet.
  let health: HealthServer | null = null
  if (config.health.port !== null) {
    try {
      health = await startHealthServer(services, { port: config.health.port, host: config.health.host, roles: config.roles })
      log(`health: ${health.url}/healthz and ${health.url}/readyz (roles ${[...config.roles].join(', ')})`)
    } catch (err) {
      // The default port (PORT+2) may be taken by something else on a shared host: said, not fatal.
      // A HEALTH_PORT that was asked for and cannot be had ends the start.
      if (!config.health.portIsDefault) {
        await Promise.allSettled([...running.map((p) => p.stop())])
        await closePublisher().catch(() => {})
        await events.close().catch(() => {})
        await docs.close().catch(() => {})
        throw err
      }
      log(`WARNING: no health port: ${config.health.host}:${config.health.port} is not free (${(err as Error).message}); set HEALTH_PORT`)
    }
  }
  const workers: RunningWorker[] = config.roles.has('workers') ? startWorkers(services) : []
  telemetry.watch({ events, docs, projections: running, roles: config.roles })
  const app = config.roles.has('api') ? buildRestHost(services, { logger: { level: config.logLevel }, metricsToken: config.observability.metricsToken }) : null
  const mcpApp = config.roles.has('api') ? buildMcpHost(services, { logger: { level: config.logLevel } }) : null
  if (app && mcpApp) {
    // The demo endpoint's sample library, written once; later starts find it and change nothing.
    // Only where the read models it reads are projected in this process (the single-process
    // start) and SEED_DEMO is not 0: an api-only process would wait on (or, after a read-model
    // loss, fail with not_found on) read models another process rebuilds (issue 31).
    try {
      if (seedsDemo(config)) await seedDemoDataset(services)
      await app.listen({ port: config.port, host: config.host })
      await mcpApp.listen({ port: config.mcp.port, host: config.mcp.host })
    } catch (err) {
      // A start that fails ends what it started, so the process exits instead of lingering.
      await Promise.allSettled([app.close(), mcpApp.close(), health?.close(), ...workers.map((w) => w.stop()), ...running.map((p) => p.stop())])
      await closePublisher().catch(() => {})
      await events.close().catch(() => {})
      await docs.close().catch(() => {})
      throw err
    }
  }
  let metricsListener: MetricsListener | null = null
  if (config.observability.metricsPort !== null) {
    try {
      metricsListener = await startMetricsListener(config.observability.metricsPort, config.observability.metricsHost)
    } catch (err) {
      await Promise.allSettled([app?.close(), mcpApp?.close(), ...workers.map((w) => w.stop()), ...running.map((p) => p.stop())])
      await closePublisher().catch(() => {})
      await events.close().catch(() => {})
      await docs.close().catch(() => {})
      throw err
    }
    log(`  metrics:     ${metricsListener.url}/metrics (METRICS_PORT)`)
  }
  return {
    services,
    app,
    mcpApp,
    baseUrl: config.publicBaseUrl,
    metricsUrl: metricsListener?.url ?? null,
    healthUrl: health?.url ?? null,
    async close() {
      await health?.close()
      // Together: an open request (a long MCP wait) must not keep the workers running, and a
      // stopping worker hands its jobs back at once (workers/transcription.ts).
      await Promise.all([app?.close(), mcpApp?.close(), ...workers.map((w) => w.stop())])
      await services.ingest.engine.close?.()
      await services.ingest.diarizerModels.close()
      // Released first: a standby waiting for a lease stops waiting, and another instance may
      // take over at once instead of after the lease's expiry.
      for (const l of leases) await l.release()
      for (const p of running) await p.stop()
      await closePublisher()
      await events.close()
      await contentKeys.close()
      await docs.close()
      await metricsListener?.close()
      await telemetry.close()
    },
  }
}
