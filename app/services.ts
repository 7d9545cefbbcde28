// Everything the edges (REST, MCP, admin CLI) call: command objects and read-side access, built
// over the ports. One instance per process.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from './config.ts'
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
import { LocalBlobStore, blobDir } from '../adapters/local/blobStore.ts'
import { readModelSync, type ReadModelSync } from '../projections/sync.ts'
import type { RunningProjection } from '../projections/runner.ts'
import { createIngest, type Ingest } from './pipeline.ts'
import { SecretBox, WebhookCommands } from '../commands/webhooks.ts'

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
  blobs: LocalBlobStore
  sync: ReadModelSync
  projections: RunningProjection[]
  /** The configured remote chat model, or null (features then use their local engines). */
  chat: ChatModel | null
  /** The ingestion pipeline's parts (jobs, fetcher, decoder, engines); the workers run them. */
  ingest: Ingest
  /** Webhook endpoints and deliveries (Power plan). */
  webhooks: WebhookCommands
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

/**
 * The key that signs upload URLs: UPLOAD_SIGNING_SECRET, or one generated on first start and kept
 * in the data directory (every process of one deployment must share it).
 */
export function uploadSigningSecret(config: Config): string {
  if (config.uploadSigningSecret) return config.uploadSigningSecret
  const file = join(config.dataDir, 'upload-signing.key')
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true })
    writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 })
  }
  return readFileSync(file, 'utf8').trim()
}

/** The key that seals webhook signing secrets in the events: WEBHOOK_SECRET_KEY, or one kept in the data directory (like the upload key). */
export function webhookSecretKey(config: Config): string {
  if (config.pipeline.webhooks.secretKey) return config.pipeline.webhooks.secretKey
  const file = join(config.dataDir, 'webhook-secret.key')
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true })
    try {
      writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
  return readFileSync(file, 'utf8').trim()
}

export function createServices(config: Config, deps: ServiceDeps): Services {
  const clock = deps.clock ?? (() => new Date())
  const handler = new CommandHandler(deps.events)
  const credits = new CreditCommands(handler, clock)
  const sync = readModelSync(deps.docs, deps.projections)
  const blobs = new LocalBlobStore({ dir: blobDir(config.dataDir), publicBaseUrl: config.publicBaseUrl, signingSecret: uploadSigningSecret(config), clock })
  return {
    config,
    version: VERSION,
    events: deps.events,
    docs: deps.docs,
    handler,
    credits,
    accounts: new AccountCommands(handler, credits, clock),
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
    blobs,
    sync,
    projections: deps.projections,
    chat: config.llm ? openAiChatModel(config.llm) : null,
    ingest: createIngest(config, { handler, credits, probe: deps.probe, resolver: deps.resolver, clock }),
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
  }
}
