// Configuration comes only from environment variables, the same inside and outside compose.
import { join, resolve } from 'node:path'
import { loadPipelineConfig, type PipelineConfig } from './pipelineConfig.ts'

export interface Config {
  port: number
  host: string
  /** How clients reach this service (upload URLs point here). Default: http://<host>:<port>. */
  publicBaseUrl: string
  dataDir: string
  /** `esdb://...` selects EventStoreDB; otherwise the SQLite file under dataDir. */
  esdbUrl: string | null
  /** `mongodb://...` selects MongoDB for read models; otherwise the embedded store under dataDir. */
  mongoUrl: string | null
  mongoDb: string
  kafkaBrokers: string[]
  kafkaTopicPrefix: string
  /** Which processes this instance runs: api, projections, workers, forwarder (comma separated). */
  roles: Set<string>
  /** Requests per API key per window (429 beyond). */
  rateLimit: { max: number; windowSeconds: number }
  /** Non-public hosts, IPs or IPv4 CIDRs that imports may reach (self-hosting, tests). */
  importAllowlist: string[]
  uploadUrlTtlSeconds: number
  uploadSigningSecret: string | null
  /** Seeds a demo pro account on a fresh data directory and prints its key. */
  seedDemo: boolean
  logLevel: string
  /** An OpenAI-compatible chat endpoint (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL); null: local engines only. */
  llm: { baseUrl: string; apiKey: string | null; model: string } | null
  /** Transcription jobs, speech engines, import downloads, webhooks (app/pipelineConfig.ts). */
  pipeline: PipelineConfig
}

const int = (v: string | undefined, fallback: number, name: string): number => {
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`)
  return n
}
const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean)

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.DATA_DIR ?? join(process.cwd(), 'data'))
  const port = int(env.PORT, 3000, 'PORT')
  const host = env.HOST ?? '127.0.0.1'
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return {
    port,
    host,
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://${shownHost}:${port}`).replace(/\/+$/, ''),
    dataDir,
    esdbUrl: env.ESDB_URL || null,
    mongoUrl: env.MONGO_URL || null,
    mongoDb: env.MONGO_DB ?? 'notes',
    kafkaBrokers: list(env.KAFKA_BROKERS),
    kafkaTopicPrefix: env.KAFKA_TOPIC_PREFIX ?? 'notes.events.',
    roles: new Set(list(env.ROLES ?? 'api,projections,workers,forwarder')),
    rateLimit: { max: int(env.RATE_LIMIT_MAX, 600, 'RATE_LIMIT_MAX'), windowSeconds: int(env.RATE_LIMIT_WINDOW_SECONDS, 60, 'RATE_LIMIT_WINDOW_SECONDS') || 60 },
    importAllowlist: list(env.IMPORT_ALLOW_HOSTS),
    uploadUrlTtlSeconds: int(env.UPLOAD_URL_TTL_SECONDS, 3600, 'UPLOAD_URL_TTL_SECONDS') || 3600,
    uploadSigningSecret: env.UPLOAD_SIGNING_SECRET || null,
    seedDemo: env.SEED_DEMO !== '0',
    logLevel: env.LOG_LEVEL ?? 'info',
    llm: env.LLM_BASE_URL ? { baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY || null, model: env.LLM_MODEL ?? 'gpt-4o-mini' } : null,
    pipeline: loadPipelineConfig(env),
  }
}
