// Opens the adapters the configuration asks for. The rest of the code sees only the ports.
import { join } from 'node:path'
import type { Config } from './config.ts'
import type { EventStore } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { openSqliteContentKeys } from '../adapters/sqlite/contentKeys.ts'
import { shreddingEventStore } from '../adapters/crypto/shreddingEventStore.ts'
import type { ContentKeyStore } from '../ports/contentKeys.ts'
import { withClaimCheck } from '../adapters/claimCheck/eventStore.ts'
import { createBlobStore } from './blobStore.ts'

/**
 * The event store, with each note's content sealed under the note's own key (crypto-shredding:
 * adapters/crypto/shreddingEventStore.ts; the keys live in DATA_DIR/keys.db, outside the log),
 * and then large payloads (transcripts with word timings) moved to the blob store behind a claim
 * check: EventStoreDB refuses appends over 1 MiB, and SQLite rows stay small the same way. The
 * order matters: what the claim check puts in the blob store is already sealed, so deleting a
 * note's key makes those blobs unreadable too.
 */
export async function openEventStore(config: Config, keys: ContentKeyStore = openContentKeys(config)): Promise<EventStore> {
  const { blobs } = createBlobStore(config, () => new Date())
  if (config.esdbUrl) {
    const { openEsdbEventStore } = await import('../adapters/esdb/eventStore.ts')
    return shreddingEventStore(withClaimCheck(openEsdbEventStore(config.esdbUrl), blobs), keys)
  }
  return shreddingEventStore(withClaimCheck(openSqliteEventStore({ path: join(config.dataDir, 'events.db') }), blobs), keys)
}

/** The note content keys (ports/contentKeys.ts): back this file up with the event log, or the notes cannot be read. */
export const openContentKeys = (config: Config): ContentKeyStore => openSqliteContentKeys({ path: join(config.dataDir, 'keys.db') })

export async function openDocumentStore(config: Config): Promise<DocumentStore> {
  if (config.mongoUrl) {
    const { openMongoDocumentStore } = await import('../adapters/mongodb/documentStore.ts')
    return openMongoDocumentStore(config.mongoUrl, config.mongoDb)
  }
  return openEmbeddedDocumentStore({ path: join(config.dataDir, 'readmodels.db') })
}
