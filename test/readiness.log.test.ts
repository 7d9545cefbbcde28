// Readiness reads the event log itself, not the notes in it. Opening an event asks the content-key
// store for its note's key (and the blob store for a claim-checked payload), one note after
// another: on a loaded scale deployment (FerretDB holding the keys) counting a projection's lag
// took longer than the 2 s deadline, the lag came out unknown, and the api answered "ready" for
// minutes while the projections process was dead and events piled up behind it
// (test/scale.faults.test.ts failed so, once in CI). A key store that stopped answering also
// made the log look unreachable. Here the key store hangs: readiness still counts the log, and
// names the key store (a projections process whose key-store client was stuck failed every loop
// while the log and the read models answered).
import t from 'tap'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { tempDir } from './support/tmp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openSqliteContentKeys } from '../adapters/sqlite/contentKeys.ts'
import { shreddingEventStore } from '../adapters/crypto/shreddingEventStore.ts'
import { withClaimCheck } from '../adapters/claimCheck/eventStore.ts'
import { observedEventStore } from '../adapters/telemetry/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { LocalBlobStore } from '../adapters/local/blobStore.ts'
import { readinessOf } from '../app/readiness.ts'
import { CHECKPOINTS } from '../projections/runner.ts'
import { START } from '../ports/eventStore.ts'
import type { ContentKeyStore } from '../ports/contentKeys.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'

t.test('given sealed note events behind the notes checkpoint, when the content-key store stops answering, then /readyz still finds the log and counts the lag', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const keys = openSqliteContentKeys({ path: join(tmp.dir, 'keys.db') })
  let hang = false
  const hanging: ContentKeyStore = { ...keys, key: (id, o) => (hang ? new Promise(() => {}) : keys.key(id, o)) }
  // As app/server.ts composes it (sealed, claim-checked, observed); no key cache, so every open asks the store.
  const log = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  const events = observedEventStore(shreddingEventStore(withClaimCheck(log, new LocalBlobStore({ dir: join(tmp.dir, 'blobs'), publicBaseUrl: 'http://127.0.0.1:1', signingSecret: 'test-secret' })), hanging, { cacheMs: 0 }))
  t.teardown(() => events.close())
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'readmodels.db') })
  t.teardown(() => docs.close())
  for (let i = 0; i < 5; i++) await events.appendToStream(`note-${randomUUID()}`, [{ id: randomUUID(), type: 'NoteCreated', data: { title: `secret ${i}` } }])
  await docs.collection(CHECKPOINTS).insertOne({ _id: 'notes', position: START, updatedAt: new Date().toISOString() })
  const engine = { engine: 'openai-compatible', provider: 'test', model: 'test' } as SpeechEngine
  const readiness = readinessOf({ events, docs, keys: hanging, projections: [], engine, roles: new Set(['api']), thresholds: { maxLag: 3, stallSeconds: 30, forwarderMaxDownSeconds: 60 } })
  t.equal((await events.readAll()).length, 5, 'the events open while the key store answers')

  hang = true
  const r = await readiness()
  t.match(r.eventStore, { reachable: true }, 'the log is not blamed for the key store')
  t.match(r.projections.find((p) => p.name === 'notes'), { behind: 5, checkpoint: 'present' })
  t.ok(r.reasons.some((x) => /^projection notes: 5 events behind the log \(READY_MAX_LAG 3\)/.test(x)), r.reasons.join('; '))
  t.ok(r.reasons.some((x) => /^content-key store: does not answer \(no answer within 2000 ms\)$/.test(x)), 'the key store is named itself')
  t.match(r.keyStore, { reachable: false })
  t.equal(r.ready, false)
})
