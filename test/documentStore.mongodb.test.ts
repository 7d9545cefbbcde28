// The DocumentStore conformance suite against the MongoDB adapter, on a real MongoDB-wire server
// (FerretDB, started by `bash scripts/servers/ferretdb.sh start`, which prints MONGO_URL=...).
// MONGO_URL set and the server down: the suite fails (the factory cannot connect). MONGO_URL
// unset: nothing to run here; say so and pass.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { dropMongoDatabase, openMongoDocumentStore } from '../adapters/mongodb/documentStore.ts'
import { documentStoreConformance } from './conformance/documentStore.suite.ts'

const url = process.env.MONGO_URL

/** Fail fast (10 s, not the driver's 30 s) when the configured server does not answer. */
function withSelectionTimeout(u: string): string {
  if (/[?&]serverSelectionTimeoutMS=/i.test(u)) return u
  return u + (u.includes('?') ? '&' : u.endsWith('/') ? '?' : '/?') + 'serverSelectionTimeoutMS=10000'
}

if (!url) {
  const message =
    'MongoDB DocumentStore suite not run: it needs MONGO_URL (e.g. mongodb://127.0.0.1:27027/). ' +
    'Run it via `npm test`, which starts FerretDB, or: eval "$(bash scripts/servers/ferretdb.sh start)" && MONGO_URL=$MONGO_URL npx tap test/documentStore.mongodb.test.ts'
  console.error(message)
  t.skip('MONGO_URL not set: MongoDB suite needs MONGO_URL (npm test starts FerretDB and sets it)', () => {})
} else {
  const serverUrl = withSelectionTimeout(url)
  documentStoreConformance(t, 'mongodb (FerretDB)', async () => {
    const dbName = 'test_docstore_' + randomUUID().replace(/-/g, '').slice(0, 16)
    const store = await openMongoDocumentStore(serverUrl, dbName)
    return {
      store,
      reopen: () => openMongoDocumentStore(serverUrl, dbName),
      cleanup: async () => {
        await store.close()
        await dropMongoDatabase(serverUrl, dbName)
      },
    }
  })
}
