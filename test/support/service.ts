// A whole service for API tests: SQLite events and the embedded read models in a temp directory
// (or MongoDB, when asked and MONGO_URL is set), every read-model projection running, the fastify
// app ready for `inject`. Links resolve through a fixed table instead of DNS.
import { join } from 'node:path'
import { isIP } from 'node:net'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { openSqliteEventStore } from '../../adapters/sqlite/eventStore.ts'
import { openSqliteContentKeys } from '../../adapters/sqlite/contentKeys.ts'
import { shreddingEventStore } from '../../adapters/crypto/shreddingEventStore.ts'
import { openEmbeddedDocumentStore } from '../../adapters/embedded/documentStore.ts'
import { ffprobeMediaProbe } from '../../adapters/ffprobe/mediaProbe.ts'
import { loadConfig, type Config } from '../../app/config.ts'
import { createServices, type Services } from '../../app/services.ts'
import { READ_MODEL_PROJECTIONS } from '../../app/projections.ts'
import { buildRestHost } from '../../app/http.ts'
import { startProjection } from '../../projections/runner.ts'
import { WORKERS, type RunningWorker } from '../../app/workers.ts'
import type { DocumentStore } from '../../ports/documentStore.ts'
import type { EventStore } from '../../ports/eventStore.ts'
import type { HostResolver } from '../../ports/hostResolver.ts'
import type { Plan } from '../../domain/credits/plans.ts'
import { tempDir } from './tmp.ts'

/** Resolves names from a table (IP literals resolve to themselves); unknown names do not resolve. */
export function staticResolver(table: Record<string, string[]> = {}): HostResolver {
  return {
    async resolve(host) {
      if (isIP(host)) return [host]
      const found = table[host.toLowerCase()]
      if (!found) throw new Error(`ENOTFOUND ${host}`)
      return found
    },
  }
}

export const PUBLIC_HOSTS: Record<string, string[]> = {
  'podcasts.example.org': ['93.184.216.34'],
  'media.example.org': ['93.184.216.35'],
  'www.youtube.com': ['142.250.184.206'],
  'podcasts.apple.com': ['17.253.144.10'],
  'feeds.example.org': ['93.184.216.36'],
  'rebind.example.org': ['93.184.216.37', '127.0.0.1'],
  'intranet.example.org': ['10.1.2.3'],
}

export interface TestServiceOptions {
  env?: Record<string, string>
  resolver?: HostResolver
  /** Use MongoDB (MONGO_URL) for read models, in a database of its own. */
  mongo?: boolean
  clock?: () => Date
  /** Run the background workers (transcription, webhooks, translations, voice) in this process from the start. */
  workers?: boolean
  /** Run on this data directory (kept on close) instead of a new temporary one: a restart on another process's data. */
  dataDir?: string
  /** Wraps the event store the service writes through (a test that makes some appends fail). */
  wrapEvents?: (events: EventStore) => EventStore
}

export interface TestService {
  services: Services
  app: FastifyInstance
  docs: DocumentStore
  config: Config
  dir: string
  /** A new account on `plan` with one API key. */
  account(plan?: Plan): Promise<{ accountId: string; apiKey: string; headers: Record<string, string> }>
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>
  /** Starts the background workers (once); `workers: true` does it at start. */
  startWorkers(): RunningWorker[]
  close(): Promise<void>
}

export async function testService(options: TestServiceOptions = {}): Promise<TestService> {
  const tmp = options.dataDir ? { dir: options.dataDir, remove: () => {} } : tempDir()
  // Like the rate limit, load shedding is off unless a test asks: suites run engines in this very
  // process on a loaded machine, where a busy event loop is expected and must not turn into 503s.
  const config = loadConfig({ DATA_DIR: tmp.dir, PORT: '3000', RATE_LIMIT_MAX: '100000', MAX_EVENT_LOOP_DELAY_MS: '0', ...options.env })
  // As in production (app/infrastructure.ts): note content sealed under per-note keys kept apart.
  const contentKeys = openSqliteContentKeys({ path: join(tmp.dir, 'keys.db') })
  const sealed = shreddingEventStore(openSqliteEventStore({ path: join(tmp.dir, 'events.db') }), contentKeys)
  const events = options.wrapEvents ? options.wrapEvents(sealed) : sealed
  let docs: DocumentStore
  let dropMongo = async () => {}
  if (options.mongo) {
    const url = process.env.MONGO_URL
    if (!url) throw new Error('MONGO_URL is not set: the MongoDB suites need it (npm test starts FerretDB)')
    const { openMongoDocumentStore, dropMongoDatabase } = await import('../../adapters/mongodb/documentStore.ts')
    const db = `test_${randomUUID().replace(/-/g, '').slice(0, 12)}`
    docs = await openMongoDocumentStore(url, db)
    dropMongo = () => dropMongoDatabase(url, db)
  } else {
    docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'readmodels.db') })
  }
  const projections = READ_MODEL_PROJECTIONS.map((p) => startProjection(p, { events, docs }))
  const services = createServices(config, {
    events,
    docs,
    probe: ffprobeMediaProbe(),
    resolver: options.resolver ?? staticResolver(PUBLIC_HOSTS),
    projections,
    contentKeys,
    ...(options.clock ? { clock: options.clock } : {}),
  })
  const app = buildRestHost(services)
  await app.ready()
  let workers: RunningWorker[] | null = null
  const startWorkers = () => (workers ??= WORKERS.map((start) => start(services)))
  if (options.workers) startWorkers()
  return {
    services,
    app,
    docs,
    config,
    dir: tmp.dir,
    async account(plan: Plan = 'pro') {
      const { accountId } = await services.accounts.openAccount({ name: `test ${plan}`, plan })
      const { apiKey } = await services.accounts.createApiKey(accountId)
      return { accountId, apiKey, headers: { authorization: `Bearer ${apiKey}` } }
    },
    inject: (opts) => app.inject(opts),
    startWorkers,
    async close() {
      for (const w of workers ?? []) await w.stop()
      await services.ingest.engine.close?.()
      await services.ingest.diarizerModels.close()
      await app.close()
      for (const p of projections) await p.stop()
      await events.close()
      await contentKeys.close()
      await docs.close()
      await dropMongo()
      tmp.remove()
    },
  }
}
