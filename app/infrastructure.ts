// Opens the adapters the configuration asks for. The rest of the code sees only the ports.
import { join } from 'node:path'
import type { Config } from './config.ts'
import type { EventStore } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'

export async function openEventStore(config: Config): Promise<EventStore> {
  if (config.esdbUrl) {
    const { openEsdbEventStore } = await import('../adapters/esdb/eventStore.ts')
    return openEsdbEventStore(config.esdbUrl)
  }
  return openSqliteEventStore({ path: join(config.dataDir, 'events.db') })
}

export async function openDocumentStore(config: Config): Promise<DocumentStore> {
  if (config.mongoUrl) {
    const { openMongoDocumentStore } = await import('../adapters/mongodb/documentStore.ts')
    return openMongoDocumentStore(config.mongoUrl, config.mongoDb)
  }
  return openEmbeddedDocumentStore({ path: join(config.dataDir, 'readmodels.db') })
}
