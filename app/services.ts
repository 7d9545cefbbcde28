// Everything the edges (REST, MCP, admin CLI) call: command objects and read-side access, built
// over the ports. One instance per process.
import type { Config } from './config.ts'
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
import { AccountStatusQueries } from '../commands/accountStatus.ts'
import type { LocalBlobStore } from '../adapters/local/blobStore.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import { createBlobStore } from './blobStore.ts'
import { readModelSync, type ReadModelSync } from '../projections/sync.ts'
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
import { createTranscriptServices, speakerEmbedderFrom, type TranscriptServices } from './transcriptServices.ts'
import { createIngest, type Ingest } from './pipeline.ts'
import { SecretBox, WebhookCommands } from '../commands/webhooks.ts'
import { ClipCommands } from '../commands/clips.ts'
import { OperationLimits } from '../api/rateLimit.ts'
import { ApiKeyUsage } from '../commands/apiKeyUsage.ts'
import { PersonCommands } from '../commands/persons.ts'
import { AuthorizedClients } from '../commands/authorizedClients.ts'

export interface Services {
  config: Config
  version: string
  events: EventStore
  docs: DocumentStore
  handler: CommandHandler
  credits: CreditCommands
  accounts: AccountCommands
  notes: NoteCommands
  folders: FolderCommands
  /** The OAuth 2.1 authorization server behind MCP (spec part 5). */
  oauth: OAuthCommands
  /** Plan, credits and usage of an account (MCP founder_status). */
  status: AccountStatusQueries
  /** Uploads, media, deliverable files, voiceprints: the local directory or S3 (app/blobStore.ts). */
  blobs: BlobStore
  /** The local store when this service serves the presigned upload URLs itself (PUT /uploads/:id); null with S3. */
  localUploads: LocalBlobStore | null
  sync: ReadModelSync
  projections: RunningProjection[]
  /** The configured remote chat model, or null (features then use their local engines). */
  chat: ChatModel | null
  /** Transcript exports and edits, translations, speakers, voice profiles. */
  transcriptFeatures: TranscriptServices
  /** The language engine of analyses, outlines, answers and deliverables (LANGUAGE_ENGINE). */
  language: LanguageEngine
  analysis: AnalysisCommands
  ask: AskCommands
  deliverables: DeliverableCommands
  /** The ingestion pipeline's parts (jobs, fetcher, decoder, engines); the workers run them. */
  ingest: Ingest
  /** Webhook endpoints and deliveries (Power plan). */
  webhooks: WebhookCommands
  /** MP3 clips of a note's audio (MCP extract_clip, REST GET /v1/notes/{id}/clip). */
  clips: ClipCommands
  /** Per-operation limits (domain/limits.ts), one count per credential shared by REST and MCP. */
  limits: OperationLimits
  /** People who sign in to the web dashboard, and their sessions. */
  persons: PersonCommands
  /** The AI clients an account authorised through OAuth: list and revoke (dashboard). */
  authorizedClients: AuthorizedClients
}

export interface ServiceDeps {
  events: EventStore
  docs: DocumentStore
  probe: MediaProbe
  resolver: HostResolver
  projections: RunningProjection[]
  clock?: () => Date
}

export const VERSION = '1.0.0'

/** The key that seals webhook signing secrets in the events: WEBHOOK_SECRET_KEY, or one kept in the data directory (like the upload key). */
export const webhookSecretKey = (config: Config): string => signingSecret(config.dataDir, 'webhook', config.pipeline.webhooks.secretKey)

export function createServices(config: Config, deps: ServiceDeps): Services {
  const clock = deps.clock ?? (() => new Date())
  const handler = new CommandHandler(deps.events)
  const credits = new CreditCommands(handler, clock)
  const sync = readModelSync(deps.docs, deps.projections)
  const { blobs, localUploads } = createBlobStore(config, clock)
  const chat = config.llm ? openAiChatModel(config.llm) : null
  const language = config.languageEngine === 'remote' && chat ? openAiLanguageEngine(chat) : localLanguageEngine()
  const languageDeps = { handler, credits, docs: deps.docs, sync, engine: language, clock }
  const speakerModel = speakerEmbedderFrom(config.transcripts.speakerEmbeddingModel, config.transcripts.speakerModelIsDefault)
  const ingest = createIngest(config, { handler, credits, probe: deps.probe, resolver: deps.resolver, speakerModel, clock })
  const oauth = new OAuthCommands(handler, credits, { issuer: config.publicBaseUrl, resources: mcpResources(config) }, clock)
  return {
    config,
    version: VERSION,
    events: deps.events,
    docs: deps.docs,
    handler,
    credits,
    accounts: new AccountCommands(handler, credits, clock, new ApiKeyUsage(deps.events, config.dashboard.keyUsageIntervalSeconds * 1000, clock)),
    notes: new NoteCommands({
      handler,
      credits,
      blobs,
      probe: deps.probe,
      resolver: deps.resolver,
      docs: deps.docs,
      sync,
      config: { importAllowlist: config.importAllowlist, uploadUrlTtlSeconds: config.uploadUrlTtlSeconds },
      clock,
    }),
    folders: new FolderCommands(handler, deps.docs, sync, clock),
    oauth,
    status: new AccountStatusQueries(handler, deps.docs, clock),
    blobs,
    localUploads,
    sync,
    projections: deps.projections,
    chat,
    transcriptFeatures: createTranscriptServices(config, { handler, credits, docs: deps.docs, sync, blobs, chat, speakerModel, clock }),
    language,
    analysis: new AnalysisCommands({ ...languageDeps, log: (message, err) => console.error(`[analysis] ${message}:`, err) }),
    ask: new AskCommands(languageDeps),
    deliverables: new DeliverableCommands({
      ...languageDeps,
      blobs,
      renderers: { document: docxRenderer(), slides: pptxRenderer(), email: emlRenderer({ from: 'Notes <no-reply@notes.invalid>', domain: new URL(config.publicBaseUrl).hostname || 'notes.invalid' }) },
      baseUrl: config.publicBaseUrl,
    }),
    ingest,
    clips: new ClipCommands({ handler, credits, blobs, media: ingest.media }),
    webhooks: new WebhookCommands({
      handler,
      docs: deps.docs,
      sync,
      resolver: deps.resolver,
      allowlist: config.pipeline.webhooks.allowlist,
      rotationGraceMs: config.pipeline.webhooks.rotationGraceMs,
      secrets: new SecretBox(webhookSecretKey(config)),
      clock,
    }),
    limits: new OperationLimits(),
    persons: new PersonCommands(handler, credits, { sessionSeconds: config.dashboard.sessionSeconds }, clock),
    authorizedClients: new AuthorizedClients({ oauth, docs: deps.docs, sync }),
  }
}

/** The MCP endpoints OAuth tokens are issued for: {mcp_url} first, then {base_url}/mcp/stream. */
export const mcpResources = (config: Config): string[] => [config.mcp.publicUrl, `${config.publicBaseUrl}/mcp/stream`]
