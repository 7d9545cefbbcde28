// The application as its edges see it: the command services and the read-side query objects that
// REST (api/), MCP (mcp/) and the dashboard (api/dashboard/) may call, and the few settings they
// answer with. app/services.ts implements it; an edge never sees the stores, the command handler
// or the configuration behind it.
import type { BlobStore, SignedUploadTarget } from '../ports/blobStore.ts'
import type { ReadQueries } from '../readmodels/queries.ts'
import type { AccountStatusQueries } from '../readmodels/accountStatus.ts'
import type { AuthorizedClients } from '../readmodels/authorizedClients.ts'
import type { CreditAudit } from '../readmodels/creditAudit.ts'
import type { AccountCommands } from './accounts.ts'
import type { NoteCommands } from './notes.ts'
import type { FolderCommands } from './folders.ts'
import type { OAuthCommands } from './oauth.ts'
import type { AnalysisCommands } from './analysis.ts'
import type { AskCommands } from './ask.ts'
import type { DeliverableCommands } from './deliverables.ts'
import type { WebhookCommands } from './webhooks.ts'
import type { ClipCommands } from './clips.ts'
import type { PersonCommands } from './persons.ts'
import type { TranscriptCommands } from './transcripts.ts'
import type { VoiceCommands } from './voice.ts'
import type { OperationLimits } from './operationLimits.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { CounterStore } from '../ports/counterStore.ts'

/** What the edges need of the configuration; secrets already resolved (configured or kept in DATA_DIR). */
/** One store this process depends on, asked with a deadline. */
export interface DependencyCheck {
  reachable: boolean
  latencyMs: number | null
  error: string | null
}

export type LoopStateName = 'starting' | 'running' | 'retrying' | 'rebuilding' | 'failed' | 'stopped'

/** A read model's projection as /readyz reports it. */
export interface ProjectionReadiness {
  name: string
  /** Its checkpoint (in this process: the last applied event). */
  position: number
  /** Events of the log it follows and has not applied yet (counted up to a cap: `behindAtLeast`); null when the event store does not answer. */
  behind: number | null
  behindAtLeast: boolean
  inThisProcess: boolean
  /** The supervised loop's state in this process (null when another process runs it). */
  state: LoopStateName | null
  retries: number
  lastError: string | null
  /** Whether its checkpoint is in the read-model store (`missing`: lost with the store, or not written yet; `unknown`: the store does not answer). */
  checkpoint: 'present' | 'missing' | 'unknown'
  /** With events to apply: how long its checkpoint has not moved (s); else null. */
  stalledSeconds: number | null
}

/** GET /readyz: whether this process can serve its roles, and what it serves with. */
export interface Readiness {
  ready: boolean
  /** The roles this process runs. */
  roles: string[]
  /** Why it is not ready, one line per failing check, each naming the dependency; empty when ready. */
  reasons: string[]
  eventStore: DependencyCheck
  /** Null where the roles do not use it. */
  readModelStore: DependencyCheck | null
  blobStore: DependencyCheck | null
  /** The notes' content-key store (null where this process opens no events with it). */
  keyStore: DependencyCheck | null
  /** The forwarder's broker connection (role forwarder with KAFKA_BROKERS); null elsewhere. */
  kafka: { state: 'connecting' | 'up' | 'down' | 'closed'; since: string; downSeconds: number; error: string | null } | null
  /** The read models this process depends on: its own projections, and for api and workers every read model. */
  projections: ProjectionReadiness[]
  /** The Kafka forwarder in this process, or null. */
  forwarder: Omit<ProjectionReadiness, 'checkpoint' | 'stalledSeconds'> | null
  /** The speech engine: for local engines the build, instruction set, model and threads (the start banner's line). */
  speech: { engine: string; provider: string; model: string; state: 'ready' | 'preparing' | 'unavailable' | 'remote'; summary: string; reason: string | null; details: Record<string, string | number | boolean | null> }
}

export interface EdgeSettings {
  version: string
  publicBaseUrl: string
  /** The per-credential request limit of REST and MCP. */
  rateLimit: { max: number; windowSeconds: number }
  loadShedding: { maxEventLoopDelayMs: number; retryAfterSeconds: number }
  mcp: { publicUrl: string; trustProxy: boolean | number | string; allowedOrigins: string[] | '*' }
  /** TRUST_PROXY: fastify's trustProxy on the REST host (true, a hop count, or addresses). */
  trustProxy: boolean | number | string
  dashboard: { secureCookies: boolean }
  /** HEALTH_TOKEN: shows the operator's detail on the public /health and /readyz; null: status only there. */
  health: { token: string | null }
  secrets: { oauth: string; dashboard: string }
}

export interface Application {
  settings: EdgeSettings
  accounts: AccountCommands
  notes: NoteCommands
  folders: FolderCommands
  /** The OAuth 2.1 authorization server behind MCP (spec part 5). */
  oauth: OAuthCommands
  transcripts: TranscriptCommands
  voice: VoiceCommands
  analysis: AnalysisCommands
  ask: AskCommands
  deliverables: DeliverableCommands
  webhooks: WebhookCommands
  clips: ClipCommands
  persons: PersonCommands
  /** Counters shared by the API processes (MongoDB read-model store); null: each process counts in memory. */
  counters: CounterStore | null
  /** Per-operation limits (domain/limits.ts), one count per credential shared by REST and MCP. */
  limits: OperationLimits
  queries: ReadQueries
  /** Read-your-writes: wait until a projection has applied a command's position. */
  sync: ReadModelSync
  /** Plan, credits and usage of an account (MCP founder_status, REST account status). */
  status: AccountStatusQueries
  /** The ledger replayed against its read model (the dashboard's audit). */
  audit: CreditAudit
  /** The AI clients an account authorised through OAuth: list and revoke (dashboard). */
  authorizedClients: AuthorizedClients
  /** Note audio for the dashboard's player (ranges). */
  blobs: BlobStore
  /** The local store's presigned upload target (PUT /uploads/:id); null with S3, where clients upload to the bucket. */
  uploads: SignedUploadTarget | null
  /** Each running projection and the global position it has applied (GET /health). */
  projectionPositions(): { name: string; position: number }[]
  /** GET /readyz. */
  readiness(): Promise<Readiness>
}
