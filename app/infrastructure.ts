// Opens the adapters the configuration asks for. The rest of the code sees only the ports.
import { join } from 'node:path'
import type { Config } from './config.ts'
import type { EventStore } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { withClaimCheck } from '../adapters/claimCheck/eventStore.ts'
import { createBlobStore } from './blobStore.ts'

export async function openEventStore(config: Config): Promise<EventStore> {
  // Large payloads (transcripts with word timings) go to the blob store, the event keeps a claim
  // check: EventStoreDB refuses appends over 1 MiB, and SQLite rows stay small the same way.
  const { blobs } = createBlobStore(config, () => new Date())
  if (config.esdbUrl) {
    const { openEsdbEventStore } = await import('../adapters/esdb/eventStore.ts')
    return withClaimCheck(openEsdbEventStore(config.esdbUrl), blobs)
  }
  return withClaimCheck(openSqliteEventStore({ path: join(config.dataDir, 'events.db') }), blobs)
}

export async function openDocumentStore(config: Config): Promise<DocumentStore> {
  if (config.mongoUrl) {
    const { openMongoDocumentStore } = await import('../adapters/mongodb/documentStore.ts')
    return openMongoDocumentStore(config.mongoUrl, config.mongoDb)
  }
  return openEmbeddedDocumentStore({ path: join(config.dataDir, 'readmodels.db') })
}
