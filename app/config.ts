// Configuration comes only from environment variables, the same inside and outside compose.
import { join, resolve } from 'node:path'

export interface Config {
  port: number
  host: string
  dataDir: string
  /** `esdb://...` selects EventStoreDB; otherwise the SQLite file under dataDir. */
  esdbUrl: string | null
  /** `mongodb://...` selects MongoDB for read models; otherwise the embedded store under dataDir. */
  mongoUrl: string | null
  mongoDb: string
  kafkaBrokers: string[]
  kafkaTopicPrefix: string
  /** Which processes this instance runs: api, projections, forwarder (comma separated). */
  roles: Set<string>
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.DATA_DIR ?? join(process.cwd(), 'data'))
  return {
    port: Number(env.PORT ?? 3000),
    host: env.HOST ?? '127.0.0.1',
    dataDir,
    esdbUrl: env.ESDB_URL || null,
    mongoUrl: env.MONGO_URL || null,
    mongoDb: env.MONGO_DB ?? 'notes',
    kafkaBrokers: (env.KAFKA_BROKERS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    kafkaTopicPrefix: env.KAFKA_TOPIC_PREFIX ?? 'notes.events.',
    roles: new Set((env.ROLES ?? 'api,projections,forwarder').split(',').map((s) => s.trim())),
  }
}
