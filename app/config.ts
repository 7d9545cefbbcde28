// Configuration comes only from environment variables, the same inside and outside compose.
import { join, resolve } from 'node:path'
import { allowlist, loadPipelineConfig, type PipelineConfig } from './pipelineConfig.ts'
import { loadWebhookConfig, type WebhookConfig } from './webhookConfig.ts'
import { loadS3Config, type S3Config } from './blobStore.ts'
import { parseTrustProxy } from '../api/http/trustProxy.ts'
import { SPEAKER_MODEL_FILE } from '../adapters/ge2e/resemblyzerModel.ts'
import { DEFAULT_DIARIZATION_THRESHOLD } from '../adapters/onnxruntime/diarizer.ts'
import { DEFAULT_MAX_DURATION_SECONDS, PLANS, isPlan, type Plan } from '../domain/credits/plans.ts'
import { MAX_LAG_POSITIONS } from '../projections/sync.ts'
import { CHECKPOINT_LAG_MS } from '../projections/runner.ts'

export interface Config {
  /** PORT: where the REST API, OAuth and the dashboard listen. */
  port: number
  /** HOST: the address they listen on (`0.0.0.0` for every interface). */
  host: string
  /** How clients reach this service (upload URLs point here). Default: http://<host>:<port>. */
  publicBaseUrl: string
  /** DATA_DIR: the embedded event store, read models, blobs and generated secrets. */
  dataDir: string
  /** MODELS_DIR (default DATA_DIR/models): where fetched model files are kept. */
  modelsDir: string
  /** `esdb://...` selects EventStoreDB; otherwise the SQLite file under dataDir. */
  esdbUrl: string | null
  /** `mongodb://...` selects MongoDB for read models; otherwise the embedded store under dataDir. */
  mongoUrl: string | null
  /** MONGO_DB: the read models' database with MONGO_URL. */
  mongoDb: string
  /**
   * KEYS_MONGO_DB (default MONGO_DB + `_keys`): with MONGO_URL, the MongoDB database of the note
   * content keys and the signing secrets, shared by every process on every host. Never the read
   * models' database: those are rebuilt from the log and may be dropped, the keys cannot be
   * rebuilt from anything. Back it up with the event store. Without MONGO_URL: DATA_DIR.
   */
  keysMongoDb: string
  /** KAFKA_BROKERS: comma-separated brokers; turns the analytics forwarder on (docs/kafka.md). */
  kafkaBrokers: string[]
  /** KAFKA_TOPIC_PREFIX: topic name prefix; a topic per stream category follows it. */
  kafkaTopicPrefix: string
  /** KAFKA_CHECKPOINT_TOPIC (default `notes.forwarder.checkpoints`): the compacted one-partition topic where the forwarder keeps its checkpoint (docs/health-and-recovery.md). */
  kafkaCheckpointTopic: string
  /** Topics (stream categories, e.g. `note,ask`) on which personal fields are published; none by default. */
  analyticsPersonalTopics: string[]
  /** Which processes this instance runs: api, projections, workers, forwarder (comma separated). */
  roles: Set<string>
  /** TRUST_PROXY (fastify trustProxy on the REST host; the MCP listener's default too): false, true, a hop count, or addresses. */
  trustProxy: boolean | number | string
  /** LEASE_TTL_SECONDS: a projection's lease lapses this long after its holder last renewed it (MongoDB only). */
  leaseTtlSeconds: number
  /**
   * The operator's health listener, one per process whatever its roles (docs/health-and-recovery.md):
   * HEALTH_PORT (default PORT+2, e.g. 3002; 0 when PORT is 0: any free port; `off`: none) on
   * HEALTH_HOST (default 127.0.0.1) serves GET /healthz and GET /readyz with every detail and no
   * token. Compose healthchecks probe http://127.0.0.1:$HEALTH_PORT/readyz inside each role's
   * container. HEALTH_TOKEN: a bearer token that also shows the detail on the API's public
   * /health and /readyz (unset: the public ones answer with a status only).
   */
  health: { port: number | null; portIsDefault: boolean; host: string; token: string | null }
  /**
   * When /readyz says not ready (docs/health-and-recovery.md): READY_MAX_LAG (default 500) events a
   * read model the process depends on may trail the log; READY_STALL_SECONDS (default 30) a
   * projection with events to apply may go without moving its checkpoint (a dead projections
   * process); FORWARDER_MAX_DOWN_SECONDS (default 60) the Kafka forwarder may be unable to publish.
   */
  readiness: { maxLag: number; stallSeconds: number; forwarderMaxDownSeconds: number }
  /** READ_MODEL_CHECK_MS (default 2000): how often the projections process looks whether the read-model store lost its checkpoints (then it rebuilds them in bulk). */
  readModelCheckMs: number
  /** READ_MODEL_MAX_LAG: how many log positions a projection may trail a note command before the command waits for it (back-pressure). */
  readModelMaxLag: number
  /** RATE_LIMIT_MAX requests per API key per RATE_LIMIT_WINDOW_SECONDS (429 beyond). */
  rateLimit: { max: number; windowSeconds: number }
  /** Load shedding (docs/operations.md, "Health and load shedding"): 503 while the event loop lags more than this (0: off). */
  loadShedding: { maxEventLoopDelayMs: number; retryAfterSeconds: number }
  /** Non-public hosts, IPs or IPv4 CIDRs that imports may reach (self-hosting, tests). */
  importAllowlist: string[]
  /** UPLOAD_URL_TTL_SECONDS: the lifetime of a presigned upload URL (at most 7 days with S3). */
  uploadUrlTtlSeconds: number
  /** UPLOAD_SIGNING_SECRET: HMAC key of upload URLs; generated into DATA_DIR when unset; every API process of a deployment needs the same. */
  uploadSigningSecret: string | null
  /** Blobs in an S3-compatible store (S3_BUCKET, S3_ENDPOINT, ...; app/blobStore.ts); null: the local directory. */
  s3: S3Config | null
  /** Seeds a demo pro account on a fresh data directory and prints its key. */
  seedDemo: boolean
  /** LOOP_GIVE_UP_SECONDS: how long a supervised loop (projection, forwarder) may fail without progress before the process exits non-zero. */
  loopGiveUpSeconds: number
  /** LOOP_BATCH_TIMEOUT_SECONDS (default 120): a projection's batch that has not finished by then (a store call that never answers) fails and is retried. */
  loopBatchTimeoutSeconds: number
  /** CHECKPOINT_IDLE_MS (default 250): how late a projection may save the checkpoint of batches that wrote nothing (a batch that writes saves it with its writes). */
  checkpointIdleMs: number
  /** LOG_LEVEL: pino's log level (`debug` also shows kafkajs' own lines). */
  logLevel: string
  /** An OpenAI-compatible chat endpoint (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL); null: local engines only. */
  llm: { baseUrl: string; apiKey: string | null; model: string } | null
  /**
   * The MCP listener, {mcp_url}: MCP_PORT (default PORT+1), MCP_HOST (default HOST),
   * MCP_PUBLIC_URL (how clients reach it; default http://<host>:<MCP_PORT>), MCP_TRUST_PROXY
   * (fastify trustProxy: true, a hop count, or addresses; the demo limit counts per client IP).
   */
  mcp: { port: number; host: string; publicUrl: string; trustProxy: boolean | number | string; allowedOrigins: string[] | '*' }
  /** Signs the OAuth consent page's CSRF tokens and sign-in cookie; generated into DATA_DIR when unset. */
  oauthSigningSecret: string | null
  /** Transcripts, translations, speakers and voice profiles (docs/speech.md, "Transcripts, translations, speakers and voices"). */
  transcripts: {
    /** TRANSLATION_ENGINE: auto (LLM, else Apertium, else none), llm, apertium, none. */
    translationEngine: 'auto' | 'llm' | 'apertium' | 'none'
    /** How often the translation worker looks at its queue without a wake-up (TRANSLATION_POLL_MS). */
    translationPollMs: number
    /**
     * SPEAKER_EMBEDDING_MODEL: the speaker-embedding model file of diarization and voice matching;
     * default MODELS_DIR/resemblyzer-0.1.4-pretrained.pt, which `npm start` fetches from PyPI.
     */
    speakerEmbeddingModel: string
    /** True when speakerEmbeddingModel is the default path (start fetches it when missing). */
    speakerModelIsDefault: boolean
    /**
     * DIARIZATION (on/off, default on): the local diarizer labels speakers when the speech engine
     * does not. DIARIZATION_THRESHOLD: the cosine similarity of two speaker embeddings at which
     * they are one voice. DIARIZATION_THREADS (default 2): onnxruntime's threads. The models
     * and their runtime go to MODELS_DIR, run by ASR_PYTHON (default python3).
     */
    diarization: { enabled: boolean; threshold: number; threads: number; modelsDir: string; python: string }
    /** VOICE_MATCH_THRESHOLD: lowest cosine similarity that counts as resembling a profile. */
    voiceMatchThreshold: number
  }
  /** LANGUAGE_ENGINE: `local` (the deterministic extractive engine) or `remote` (the LLM_* endpoint). Default: remote when LLM_BASE_URL is set, else local. */
  languageEngine: 'local' | 'remote'
  /** The transcription pipeline: jobs, speech engines, import downloads (app/pipelineConfig.ts). */
  pipeline: PipelineConfig
  /** The webhook sender: retries, timeouts, allowlist, signing secrets (app/webhookConfig.ts). */
  webhooks: WebhookConfig
  /** AUDIO_RETENTION_DAYS (default 30): audio older than this is deleted unless the note keeps it; AUDIO_RETENTION_CHECK_MS: how often to look. */
  audioRetention: { days: number; checkEveryMs: number }
  /**
   * CREDIT_HOLD_LEASE_SECONDS (default 900): a credit hold older than this whose owner never
   * appeared (an import's note; any synchronous request) is released by the sweeper and reported
   * by the auditor; CREDIT_HOLD_SWEEP_MS (default 60000): how often the sweeper looks.
   */
  creditHolds: { leaseMs: number; sweepEveryMs: number }
  /** PLAN_MAX_DURATION_MINUTES (`free=60,pro=300,...`, defaults in domain/credits/plans.ts): the longest audio per note, in seconds. */
  maxDurationSeconds: Record<Plan, number>
  /** FAULT_INJECT: comma-separated fault points for crash tests (`crash-after-import-reserve`); never set in production. */
  faults: Set<string>
  /** Uploads not finalized within the URL's lifetime plus `graceMs` fail (workers/uploadExpiry.ts). */
  uploadExpiry: { graceMs: number; checkEveryMs: number }
  /** Metrics and traces (docs/observability.md). */
  observability: ObservabilityConfig
  /** The web dashboard at {dashboard_url} = <publicBaseUrl>/app (docs/dashboard.md, "Web dashboard"). */
  dashboard: {
    /** DASHBOARD_SESSION_HOURS (default 12): a session's absolute lifetime. */
    sessionSeconds: number
    /** DASHBOARD_COOKIE_SECURE: `Secure` on the session cookie; default on when PUBLIC_BASE_URL is https. */
    secureCookies: boolean
    /** DASHBOARD_SIGNING_SECRET: signs CSRF tokens; generated into DATA_DIR when unset. */
    signingSecret: string | null
    /** API_KEY_USAGE_INTERVAL_SECONDS (default 300): a key's use is recorded at most once per interval and process. */
    keyUsageIntervalSeconds: number
  }
}

export interface ObservabilityConfig {
  /** A bearer token: GET /metrics on the REST host answers a caller sending it; unset, the REST host has no /metrics. */
  metricsToken: string | null
  /** The port of this process's operator listener, serving GET /metrics without a token, whatever its roles (0: any free port); unset, none. */
  metricsPort: number | null
  /** The operator listener's address (default HOST): keep it off the public network. */
  metricsHost: string
  /** An OTLP collector (http://host:4318): traces go there, and tracing is on only when it is set. */
  otlpEndpoint: string | null
  /** How this process is named in metrics (the `service` label) and traces; default notes-<roles>. */
  serviceName: string
}

const int = (v: string | undefined, fallback: number, name: string): number => {
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`)
  return n
}
const oneOf = <T extends string>(v: string | undefined, values: readonly T[], fallback: T, name: string): T => {
  if (v === undefined || v === '') return fallback
  if (!(values as readonly string[]).includes(v)) throw new Error(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(v)}`)
  return v as T
}
const fraction = (v: string | undefined, fallback: number, name: string): number => {
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!(n >= 0 && n <= 1)) throw new Error(`${name} must be a number from 0 to 1, got ${JSON.stringify(v)}`)
  return n
}
const onOff = (v: string | undefined, fallback: boolean, name: string): boolean => {
  const s = (v ?? '').trim().toLowerCase()
  if (s === '') return fallback
  if (['1', 'on', 'true'].includes(s)) return true
  if (['0', 'off', 'false'].includes(s)) return false
  throw new Error(`${name} must be on or off, got ${JSON.stringify(v)}`)
}
function maxDurations(v: string | undefined): Record<Plan, number> {
  const out = { ...DEFAULT_MAX_DURATION_SECONDS }
  for (const entry of list(v)) {
    const [plan, minutes] = entry.split('=').map((x) => x.trim())
    const n = Number(minutes)
    if (!plan || !isPlan(plan) || !Number.isFinite(n) || n <= 0) throw new Error(`PLAN_MAX_DURATION_MINUTES: "${entry}" is not plan=minutes (plans: ${PLANS.join(', ')})`)
    out[plan] = Math.round(n * 60)
  }
  return out
}

const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean)

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.DATA_DIR ?? join(process.cwd(), 'data'))
  const modelsDir = resolve(env.MODELS_DIR || join(dataDir, 'models'))
  const port = int(env.PORT, 3000, 'PORT')
  const host = env.HOST ?? '127.0.0.1'
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return {
    port,
    host,
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://${shownHost}:${port}`).replace(/\/+$/, ''),
    dataDir,
    modelsDir,
    esdbUrl: env.ESDB_URL || null,
    mongoUrl: env.MONGO_URL || null,
    mongoDb: env.MONGO_DB ?? 'notes',
    keysMongoDb: env.KEYS_MONGO_DB || `${env.MONGO_DB ?? 'notes'}_keys`,
    kafkaBrokers: list(env.KAFKA_BROKERS),
    kafkaTopicPrefix: env.KAFKA_TOPIC_PREFIX ?? 'notes.events.',
    kafkaCheckpointTopic: env.KAFKA_CHECKPOINT_TOPIC || 'notes.forwarder.checkpoints',
    analyticsPersonalTopics: list(env.ANALYTICS_PERSONAL_TOPICS),
    roles: new Set(list(env.ROLES ?? 'api,projections,workers,forwarder')),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    leaseTtlSeconds: int(env.LEASE_TTL_SECONDS, 30, 'LEASE_TTL_SECONDS') || 30,
    health: healthConfig(env, port),
    readiness: {
      maxLag: int(env.READY_MAX_LAG, 500, 'READY_MAX_LAG') || 500,
      stallSeconds: int(env.READY_STALL_SECONDS, 30, 'READY_STALL_SECONDS') || 30,
      forwarderMaxDownSeconds: int(env.FORWARDER_MAX_DOWN_SECONDS, 60, 'FORWARDER_MAX_DOWN_SECONDS') || 60,
    },
    readModelCheckMs: int(env.READ_MODEL_CHECK_MS, 2000, 'READ_MODEL_CHECK_MS') || 2000,
    readModelMaxLag: int(env.READ_MODEL_MAX_LAG, MAX_LAG_POSITIONS, 'READ_MODEL_MAX_LAG'),
    rateLimit: { max: int(env.RATE_LIMIT_MAX, 600, 'RATE_LIMIT_MAX'), windowSeconds: int(env.RATE_LIMIT_WINDOW_SECONDS, 60, 'RATE_LIMIT_WINDOW_SECONDS') || 60 },
    loadShedding: { maxEventLoopDelayMs: int(env.MAX_EVENT_LOOP_DELAY_MS, 1000, 'MAX_EVENT_LOOP_DELAY_MS'), retryAfterSeconds: int(env.LOAD_SHED_RETRY_AFTER_SECONDS, 10, 'LOAD_SHED_RETRY_AFTER_SECONDS') || 10 },
    importAllowlist: allowlist(env.IMPORT_ALLOW_HOSTS),
    uploadUrlTtlSeconds: int(env.UPLOAD_URL_TTL_SECONDS, 3600, 'UPLOAD_URL_TTL_SECONDS') || 3600,
    uploadSigningSecret: env.UPLOAD_SIGNING_SECRET || null,
    s3: loadS3Config(env),
    seedDemo: env.SEED_DEMO !== '0',
    loopGiveUpSeconds: int(env.LOOP_GIVE_UP_SECONDS, 300, 'LOOP_GIVE_UP_SECONDS') || 300,
    loopBatchTimeoutSeconds: int(env.LOOP_BATCH_TIMEOUT_SECONDS, 120, 'LOOP_BATCH_TIMEOUT_SECONDS') || 120,
    checkpointIdleMs: int(env.CHECKPOINT_IDLE_MS, CHECKPOINT_LAG_MS, 'CHECKPOINT_IDLE_MS'),
    logLevel: env.LOG_LEVEL ?? 'info',
    mcp: mcpConfig(env, port, host, shownHost),
    oauthSigningSecret: env.OAUTH_SIGNING_SECRET || null,
    llm: env.LLM_BASE_URL ? { baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY || null, model: env.LLM_MODEL ?? 'gpt-4o-mini' } : null,
    languageEngine: languageEngineOf(env),
    transcripts: {
      translationEngine: oneOf(env.TRANSLATION_ENGINE, ['auto', 'llm', 'apertium', 'none'] as const, 'auto', 'TRANSLATION_ENGINE'),
      translationPollMs: int(env.TRANSLATION_POLL_MS, 500, 'TRANSLATION_POLL_MS') || 500,
      speakerEmbeddingModel: env.SPEAKER_EMBEDDING_MODEL ? resolve(env.SPEAKER_EMBEDDING_MODEL) : join(modelsDir, SPEAKER_MODEL_FILE),
      speakerModelIsDefault: !env.SPEAKER_EMBEDDING_MODEL,
      diarization: {
        enabled: onOff(env.DIARIZATION, true, 'DIARIZATION'),
        threshold: fraction(env.DIARIZATION_THRESHOLD, DEFAULT_DIARIZATION_THRESHOLD, 'DIARIZATION_THRESHOLD'),
        threads: Math.max(1, int(env.DIARIZATION_THREADS, 2, 'DIARIZATION_THREADS')),
        modelsDir,
        python: env.ASR_PYTHON || 'python3',
      },
      voiceMatchThreshold: fraction(env.VOICE_MATCH_THRESHOLD, 0.75, 'VOICE_MATCH_THRESHOLD'),
    },
    pipeline: loadPipelineConfig(env, dataDir),
    webhooks: loadWebhookConfig(env),
    audioRetention: {
      days: int(env.AUDIO_RETENTION_DAYS, 30, 'AUDIO_RETENTION_DAYS') || 30,
      checkEveryMs: int(env.AUDIO_RETENTION_CHECK_MS, 3_600_000, 'AUDIO_RETENTION_CHECK_MS') || 3_600_000,
    },
    creditHolds: {
      leaseMs: (int(env.CREDIT_HOLD_LEASE_SECONDS, 900, 'CREDIT_HOLD_LEASE_SECONDS') || 900) * 1000,
      sweepEveryMs: int(env.CREDIT_HOLD_SWEEP_MS, 60_000, 'CREDIT_HOLD_SWEEP_MS') || 60_000,
    },
    faults: new Set(list(env.FAULT_INJECT ?? '')),
    maxDurationSeconds: maxDurations(env.PLAN_MAX_DURATION_MINUTES),
    uploadExpiry: {
      graceMs: int(env.UPLOAD_EXPIRY_GRACE_MS, 600_000, 'UPLOAD_EXPIRY_GRACE_MS'),
      checkEveryMs: int(env.UPLOAD_EXPIRY_CHECK_MS, 60_000, 'UPLOAD_EXPIRY_CHECK_MS') || 60_000,
    },
    dashboard: dashboardConfig(env, (env.PUBLIC_BASE_URL ?? '').startsWith('https:')),
    observability: {
      metricsToken: env.METRICS_TOKEN || null,
      metricsPort: env.METRICS_PORT ? int(env.METRICS_PORT, 0, 'METRICS_PORT') : null,
      metricsHost: env.METRICS_HOST ?? env.HOST ?? '127.0.0.1',
      otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || null,
      serviceName: env.OTEL_SERVICE_NAME || `notes-${list(env.ROLES ?? 'api,projections,workers,forwarder').join('-')}`,
    },
  }
}

function healthConfig(env: NodeJS.ProcessEnv, port: number): Config['health'] {
  const v = (env.HEALTH_PORT ?? '').trim().toLowerCase()
  const token = env.HEALTH_TOKEN || null
  if (token !== null && token.length < 16) throw new Error('HEALTH_TOKEN must be at least 16 characters')
  const host = env.HEALTH_HOST || '127.0.0.1'
  if (v === 'off') return { port: null, portIsDefault: false, host, token }
  if (v === '') return { port: port === 0 ? 0 : port + 2, portIsDefault: true, host, token }
  return { port: int(v, 0, 'HEALTH_PORT'), portIsDefault: false, host, token }
}

function dashboardConfig(env: NodeJS.ProcessEnv, https: boolean): Config['dashboard'] {
  const secure = (env.DASHBOARD_COOKIE_SECURE ?? '').trim().toLowerCase()
  if (secure !== '' && !['0', '1', 'true', 'false'].includes(secure)) throw new Error(`DASHBOARD_COOKIE_SECURE must be 1 or 0, got ${JSON.stringify(env.DASHBOARD_COOKIE_SECURE)}`)
  return {
    sessionSeconds: (int(env.DASHBOARD_SESSION_HOURS, 12, 'DASHBOARD_SESSION_HOURS') || 12) * 3600,
    secureCookies: secure === '' ? https : secure === '1' || secure === 'true',
    signingSecret: env.DASHBOARD_SIGNING_SECRET || null,
    keyUsageIntervalSeconds: int(env.API_KEY_USAGE_INTERVAL_SECONDS, 300, 'API_KEY_USAGE_INTERVAL_SECONDS'),
  }
}

function mcpConfig(env: NodeJS.ProcessEnv, port: number, host: string, shownHost: string): Config['mcp'] {
  const mcpPort = int(env.MCP_PORT, port + 1, 'MCP_PORT')
  const mcpHost = env.MCP_HOST ?? host
  const shown = mcpHost === '0.0.0.0' || mcpHost === '::' ? '127.0.0.1' : env.MCP_HOST ? mcpHost : shownHost
  // The MCP listener sits behind the same proxies as the REST host unless told otherwise.
  const trust = env.MCP_TRUST_PROXY ?? env.TRUST_PROXY ?? ''
  return {
    port: mcpPort,
    host: mcpHost,
    publicUrl: (env.MCP_PUBLIC_URL ?? `http://${shown}:${mcpPort}`).replace(/\/+$/, ''),
    trustProxy: trust === '' || trust === 'false' ? false : trust === 'true' ? true : /^\d+$/.test(trust) ? Number(trust) : trust,
    allowedOrigins: allowedOriginsOf(env.MCP_ALLOWED_ORIGINS),
  }
}

/**
 * MCP_ALLOWED_ORIGINS: the browser origins (scheme://host[:port], comma separated) that may call
 * the MCP endpoints and the OAuth endpoints a browser client uses, besides the service's own and
 * loopback ones; `*` allows any origin.
 */
function allowedOriginsOf(v: string | undefined): string[] | '*' {
  const list = (v ?? '').split(',').map((o) => o.trim()).filter(Boolean)
  if (list.includes('*')) return '*'
  return list.map((o) => {
    let u: URL
    try {
      u = new URL(o)
    } catch {
      throw new Error(`MCP_ALLOWED_ORIGINS: ${JSON.stringify(o)} is not an origin (scheme://host[:port])`)
    }
    if (u.origin === 'null' || u.pathname !== '/' || u.search || u.hash) throw new Error(`MCP_ALLOWED_ORIGINS: ${JSON.stringify(o)} is not an origin (scheme://host[:port])`)
    return u.origin
  })
}

function languageEngineOf(env: NodeJS.ProcessEnv): 'local' | 'remote' {
  const v = (env.LANGUAGE_ENGINE ?? '').trim().toLowerCase()
  if (v === '') return env.LLM_BASE_URL ? 'remote' : 'local'
  if (v !== 'local' && v !== 'remote') throw new Error(`LANGUAGE_ENGINE must be local or remote, got ${JSON.stringify(env.LANGUAGE_ENGINE)}`)
  if (v === 'remote' && !env.LLM_BASE_URL) throw new Error('LANGUAGE_ENGINE=remote needs LLM_BASE_URL (an OpenAI-compatible endpoint ending in /v1)')
  return v
}
