// Opens the adapters the configuration asks for. The rest of the code sees only the ports.
import { join } from 'node:path'
import type { Config } from './config.ts'
import type { EventStore } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { openSqliteContentKeys, readSqliteContentKeys } from '../adapters/sqlite/contentKeys.ts'
import { documentContentKeys, importContentKeys } from '../adapters/documentStore/contentKeys.ts'
import { documentSecrets, fileSecrets, type SecretSource } from './sharedSecrets.ts'
import { existsSync } from 'node:fs'
import { shreddingEventStore } from '../adapters/crypto/shreddingEventStore.ts'
import type { ContentKeyStore } from '../ports/contentKeys.ts'
import { withClaimCheck } from '../adapters/claimCheck/eventStore.ts'
import { createBlobStore } from './blobStore.ts'

/**
 * The event store, with each note's content sealed under the note's own key (crypto-shredding:
 * adapters/crypto/shreddingEventStore.ts; the keys live outside the log: openKeyStores),
 * and then large payloads (transcripts with word timings) moved to the blob store behind a claim
 * check: EventStoreDB refuses appends over 1 MiB, and SQLite rows stay small the same way. The
 * order matters: what the claim check puts in the blob store is already sealed, so deleting a
 * note's key makes those blobs unreadable too.
 */
export async function openEventStore(config: Config, given?: ContentKeyStore): Promise<EventStore> {
  const keys = given ?? (await openKeyStores(config)).contentKeys
  const { blobs } = createBlobStore(config, () => new Date())
  const log = config.esdbUrl
    ? (await import('../adapters/esdb/eventStore.ts')).openEsdbEventStore(config.esdbUrl)
    : openSqliteEventStore({ path: join(config.dataDir, 'events.db') })
  const events = shreddingEventStore(withClaimCheck(log, blobs), keys)
  if (given) return events
  // A key store opened here (a MongoDB client with MONGO_URL) is closed with the event store: an
  // admin command would otherwise never exit.
  const close = events.close.bind(events)
  return Object.assign(events, { close: async () => (await close(), await keys.close()) })
}

/** The note content keys (ports/contentKeys.ts) of one host, DATA_DIR/keys.db: back this file up with the event log, or the notes cannot be read. */
export const openContentKeys = (config: Config): ContentKeyStore => openSqliteContentKeys({ path: join(config.dataDir, 'keys.db') })

export interface KeyStores {
  contentKeys: ContentKeyStore
  /** The signing secrets the environment leaves unset (app/sharedSecrets.ts); read at start. */
  secrets: SecretSource
}

/**
 * Where the note content keys and the signing secrets live. With MONGO_URL: a MongoDB database of
 * their own (KEYS_MONGO_DB), which every process reaches from any host, so the roles need no
 * shared volume. Otherwise DATA_DIR (keys.db and the *-signing.key files), one host. Keys and
 * secrets an earlier start kept in DATA_DIR are carried into MongoDB once.
 */
export async function openKeyStores(config: Config, log: (msg: string) => void = () => {}): Promise<KeyStores> {
  if (!config.mongoUrl) return { contentKeys: openContentKeys(config), secrets: fileSecrets(config.dataDir) }
  const { openMongoDocumentStore } = await import('../adapters/mongodb/documentStore.ts')
  const store = await openMongoDocumentStore(config.mongoUrl, config.keysMongoDb, { log })
  try {
    const legacy = join(config.dataDir, 'keys.db')
    if (existsSync(legacy)) {
      const carried = await importContentKeys(store, `keys.db:${legacy}`, () => readSqliteContentKeys(legacy))
      if (carried !== null) log(`carried ${carried} content keys from ${legacy} into MongoDB database ${config.keysMongoDb}; once a backup of it exists, delete the file (it still holds the keys of notes deleted since)`)
    }
  } catch (err) {
    await store.close().catch(() => {})
    throw err
  }
  return { contentKeys: documentContentKeys(store), secrets: documentSecrets(store, config.dataDir) }
}

export async function openDocumentStore(config: Config, log: (msg: string) => void = () => {}): Promise<DocumentStore> {
  if (config.mongoUrl) {
    const { openMongoDocumentStore } = await import('../adapters/mongodb/documentStore.ts')
    return openMongoDocumentStore(config.mongoUrl, config.mongoDb, { log })
  }
  return openEmbeddedDocumentStore({ path: join(config.dataDir, 'readmodels.db') })
}
