// Everything the edges (REST, MCP, admin CLI) call: command objects and read-side access, built
// over the ports. One instance per process.
import { noteStream } from '../domain/notes/note.ts'
import type { Config } from './config.ts'
import type { ContentKeyStore } from '../ports/contentKeys.ts'
import { openContentKeys } from './infrastructure.ts'
import { signingSecret } from './secrets.ts'
import type { EventStore } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { MediaProbe } from '../ports/mediaProbe.ts'
import type { HostResolver } from '../ports/hostResolver.ts'
import type { ChatModel } from '../ports/chatModel.ts'
import { openAiChatModel } from '../adapters/openai/chatModel.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { AccountCommands } from '../commands/accounts.ts'
import { NoteCommands } from '../commands/notes.ts'
import { FolderCommands } from '../commands/folders.ts'
import { OAuthCommands } from '../commands/oauth.ts'
import { OAuthGrants } from '../commands/oauthGrants.ts'
import { AccountStatusQueries } from '../readmodels/accountStatus.ts'
import type { LocalBlobStore } from '../adapters/local/blobStore.ts'
import { createBlobStore } from './blobStore.ts'
import { readModelSync } from '../projections/sync.ts'
import { documentCounters } from './sharedCounters.ts'
import type { LanguageEngine } from '../ports/languageEngine.ts'
import { localLanguageEngine } from '../engines/language/localEngine.ts'
import { openAiLanguageEngine } from '../adapters/openai/languageEngine.ts'
import { docxRenderer } from '../adapters/docx/documentRenderer.ts'
import { pptxRenderer } from '../adapters/pptxgenjs/slidesRenderer.ts'
import { emlRenderer } from '../adapters/nodemailer/emailRenderer.ts'
import { AnalysisCommands } from '../commands/analysis.ts'
import { AskCommands } from '../commands/ask.ts'
import { DeliverableCommands } from '../commands/deliverables.ts'
import type { RunningProjection } from '../projections/runner.ts'
import type { ResilientPublisher } from '../projections/analyticsForwarder.ts'
import { createTranscriptServices, speakerEmbedderFrom, type TranscriptServices } from './transcriptServices.ts'
import { createIngest, type Ingest } from './pipeline.ts'
import { SecretBox, WebhookCommands } from '../commands/webhooks.ts'
import { ClipCommands } from '../commands/clips.ts'
import { OperationLimits } from '../commands/operationLimits.ts'
import { ApiKeyUsage } from '../commands/apiKeyUsage.ts'
import { PersonCommands } from '../commands/persons.ts'
import { AuthorizedClients } from '../readmodels/authorizedClients.ts'
import { creditAudit } from '../readmodels/creditAudit.ts'
import { readQueries } from '../readmodels/queries.ts'
import type { Application } from '../commands/application.ts'
import { readinessOf } from './readiness.ts'

/** The application (commands/application.ts) and what the workers, scripts and tests use besides. */
export interface Services extends Application {
  config: Config
  version: string
  events: EventStore
  docs: DocumentStore
  handler: CommandHandler
  credits: CreditCommands
  /** The local store when this service serves the presigned upload URLs itself (PUT /uploads/:id); null with S3. */
  localUploads: LocalBlobStore | null
  projections: RunningProjection[]
  /** The configured remote chat model, or null (features then use their local engines). */
  chat: ChatModel | null
  /** Transcript exports and edits, translations, speakers, voice profiles, and the translation queue. */
  transcriptFeatures: TranscriptServices
  /** The language engine of analyses, outlines, answers and deliverables (LANGUAGE_ENGINE). */
  language: LanguageEngine
  /** The transcription pipeline's parts (jobs, fetcher, decoder, engines); the workers run them. */
  ingest: Ingest
}

export interface ServiceDeps {
  events: EventStore
  docs: DocumentStore
  probe: MediaProbe
  resolver: HostResolver
  projections: RunningProjection[]
  /** The Kafka forwarder this process runs (also in `projections`), for /readyz. */
  forwarder?: { running: RunningProjection; publisher: ResilientPublisher } | null
  /** The note content keys the event store seals with (app/infrastructure.ts, openKeyStores); by default DATA_DIR/keys.db, and required with MONGO_URL. */
  contentKeys?: ContentKeyStore
  clock?: () => Date
}

export const VERSION = '1.0.0'

/** The key that seals webhook signing secrets in the events: WEBHOOK_SECRET_KEY, or one kept in the data directory (like the upload key). */
export const webhookSecretKey = (config: Config): string => signingSecret(config.dataDir, 'webhook', config.webhooks.secretKey)

export function createServices(config: Config, deps: ServiceDeps): Services {
  // DATA_DIR's keys would seal notes no other host can open.
  if (config.mongoUrl && !deps.contentKeys) throw new Error('createServices: with MONGO_URL the content keys come from the shared key store (openKeyStores)')
  const clock = deps.clock ?? (() => new Date())
  const handler = new CommandHandler(deps.events)
  const credits = new CreditCommands(handler, clock, {
    leaseMs: config.creditHolds.leaseMs,
    // Crash tests only: dies like `kill -9` at the named point.
    fault: (point) => {
      if (config.faults.has(point)) process.kill(process.pid, 'SIGKILL')
    },
  })
  const sync = readModelSync(deps.docs, deps.projections, { maxLagPositions: config.readModelMaxLag })
  const { blobs, localUploads } = createBlobStore(config, clock)
  const chat = config.llm ? openAiChatModel(config.llm) : null
  const language = config.languageEngine === 'remote' && chat ? openAiLanguageEngine(chat) : localLanguageEngine()
  const queries = readQueries(deps.docs, {
    baseUrl: config.publicBaseUrl,
    sync,
    noteWritten: async (accountId, noteId) => {
      const { events } = await deps.events.readStream(noteStream.of(noteId))
      return events.length > 0 && events[0]!.data.accountId === accountId ? events.at(-1)!.globalPosition : null
    },
  })
  const languageDeps = { handler, credits, notes: queries.notes, sync, engine: language, clock }
  const speakerModel = speakerEmbedderFrom(config.transcripts.speakerEmbeddingModel, config.transcripts.speakerModelIsDefault)
  const ingest = createIngest(config, { handler, credits, probe: deps.probe, resolver: deps.resolver, clock })
  const oauth = new OAuthCommands(handler, credits, { issuer: config.publicBaseUrl, resources: mcpResources(config) }, clock)
  const transcriptFeatures = createTranscriptServices(config, { handler, credits, queries, sync, blobs, chat, speakerModel, clock })
  // With MongoDB the API may run as several processes: limits count in the shared store.
  const counters = config.mongoUrl ? documentCounters(deps.docs) : null
  return {
    config,
    version: VERSION,
    settings: {
      version: VERSION,
      publicBaseUrl: config.publicBaseUrl,
      rateLimit: config.rateLimit,
      trustProxy: config.trustProxy,
      loadShedding: config.loadShedding,
      mcp: config.mcp,
      dashboard: config.dashboard,
      health: { token: config.health.token },
      secrets: {
        oauth: signingSecret(config.dataDir, 'oauth', config.oauthSigningSecret),
        dashboard: signingSecret(config.dataDir, 'dashboard', config.dashboard.signingSecret),
      },
    },
    queries,
    counters,
    audit: creditAudit({ events: deps.events, docs: deps.docs, sync, holdLeaseMs: config.creditHolds.leaseMs, clock }),
    projectionPositions: () => deps.projections.map((p) => ({ name: p.name, position: p.position() })),
    readiness: readinessOf({
      events: deps.events,
      docs: deps.docs,
      blobs,
      ...(deps.contentKeys ? { keys: deps.contentKeys } : {}),
      projections: deps.projections,
      forwarder: deps.forwarder ?? null,
      engine: ingest.engine,
      roles: config.roles,
      thresholds: config.readiness,
      forwarderLeaseInReadModels: !!config.mongoUrl,
    }),
    events: deps.events,
    docs: deps.docs,
    handler,
    credits,
    accounts: new AccountCommands(handler, credits, new OAuthGrants(deps.events, handler, clock), clock, new ApiKeyUsage(deps.events, config.dashboard.keyUsageIntervalSeconds * 1000, clock)),
    notes: new NoteCommands({
      handler,
      credits,
      blobs,
      probe: deps.probe,
      resolver: deps.resolver,
      docs: deps.docs,
      sync,
      config: { importAllowlist: config.importAllowlist, uploadUrlTtlSeconds: config.uploadUrlTtlSeconds, maxDurationSeconds: config.maxDurationSeconds },
      contentKeys: deps.contentKeys ?? openContentKeys(config),
      deliverables: queries.deliverables,
      voice: transcriptFeatures.voice,
      clock,
      // Crash tests only: dies like `kill -9` at the named point.
      fault: (point) => {
        if (config.faults.has(point)) process.kill(process.pid, 'SIGKILL')
      },
    }),
    folders: new FolderCommands(handler, queries.notes, sync, clock),
    oauth,
    status: new AccountStatusQueries(handler, deps.docs, clock),
    blobs,
    localUploads,
    uploads: localUploads,
    sync,
    projections: deps.projections,
    chat,
    transcriptFeatures,
    transcripts: transcriptFeatures.transcripts,
    voice: transcriptFeatures.voice,
    language,
    analysis: new AnalysisCommands({ ...languageDeps, analyses: queries.analysis, log: (message, err) => console.error(`[analysis] ${message}:`, err) }),
    ask: new AskCommands({ ...languageDeps, segments: queries.segments }),
    deliverables: new DeliverableCommands({
      ...languageDeps,
      analyses: queries.analysis,
      deliverables: queries.deliverables,
      blobs,
      renderers: { document: docxRenderer(), slides: pptxRenderer(), email: emlRenderer({ from: 'Notes <no-reply@notes.invalid>', domain: new URL(config.publicBaseUrl).hostname || 'notes.invalid' }) },
    }),
    ingest,
    clips: new ClipCommands({ handler, credits, blobs, media: ingest.media }),
    webhooks: new WebhookCommands({
      handler,
      reads: queries.webhooks,
      sync,
      resolver: deps.resolver,
      allowlist: config.webhooks.allowlist,
      rotationGraceMs: config.webhooks.rotationGraceMs,
      secrets: new SecretBox(webhookSecretKey(config)),
      clock,
    }),
    limits: new OperationLimits(Date.now, counters),
    persons: new PersonCommands(handler, credits, { sessionSeconds: config.dashboard.sessionSeconds }, clock),
    authorizedClients: new AuthorizedClients({ oauth, docs: deps.docs, sync }),
  }
}

/** The MCP endpoints OAuth tokens are issued for: {mcp_url} first, then {base_url}/mcp/stream. */
export const mcpResources = (config: Config): string[] => [config.mcp.publicUrl, `${config.publicBaseUrl}/mcp/stream`]
