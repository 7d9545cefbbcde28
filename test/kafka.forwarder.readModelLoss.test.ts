// The forwarder's checkpoint lives in Kafka (issue 31, item 2): it used to live in the read-model
// database, so dropping that database under load re-published the whole log (5,744 events) to
// Kafka. Now the checkpoint is kept in a compacted topic of its own, next to what it stands for:
// a read-model loss re-publishes nothing (the topic's event-id count stays equal to the log's),
// and the forwarder does not touch the read-model store at all, so it keeps publishing while
// that store is down. Real broker: KAFKA_BROKERS (npm test starts one).
import t from 'tap'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { openKafkaPublisher, readKafkaTopics } from '../adapters/kafka/kafkaPublisher.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { creditsStream, ledgerDecider } from '../domain/credits/ledger.ts'
import { startAnalyticsForwarder } from '../projections/analyticsForwarder.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { EventStore } from '../ports/eventStore.ts'
import { tempDir } from './support/tmp.ts'

const brokersEnv = process.env.KAFKA_BROKERS
if (!brokersEnv) {
  t.skip('KAFKA_BROKERS not set: this suite needs a Kafka broker (npm test starts one)', () => {})
} else {
  const brokers = brokersEnv.split(',').map((s) => s.trim()).filter(Boolean)
  const clientId = 'notes-test'

  async function charges(events: EventStore, accountId: string, n: number) {
    const handler = new CommandHandler(events)
    const now = new Date().toISOString()
    await handler.handle(creditsStream.of(accountId), { type: 'OpenCreditAccount', accountId, plan: 'pro', now }, ledgerDecider)
    for (let i = 0; i < n; i++) await handler.handle(creditsStream.of(accountId), { type: 'ChargeCredits', chargeId: `ch-${i}`, operation: 'transcript', cost: 1, noteId: null, requestId: null, now }, ledgerDecider)
  }

  /** A read-model store that is down: every call fails. */
  const downStore = (): DocumentStore =>
    new Proxy({} as DocumentStore, {
      get: (_t, prop) => (prop === 'then' ? undefined : () => Promise.reject(new Error(`the read-model store is down (${String(prop)})`))),
    })

  t.test('given the forwarder published the log, when the read-model store is lost and it starts again, then it re-publishes nothing and goes on from where it was', async (t) => {
    const tmp = tempDir()
    t.teardown(tmp.remove)
    const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
    t.teardown(() => events.close())
    const runId = randomUUID().slice(0, 8)
    const topicPrefix = `notes.events.test-${runId}.`
    const checkpointTopic = `notes.forwarder.checkpoints.test-${runId}`
    await charges(events, `loss-${runId}`, 40)

    const run = async (docs: DocumentStore) => {
      const forwarder = startAnalyticsForwarder(() => openKafkaPublisher({ brokers, clientId, checkpointTopic }), {
        topicPrefix,
        checkpointsInBroker: true,
        log: () => {},
        run: { events, docs, onError: () => {} },
      })
      const head = (await events.readAll({ maxCount: 1e6 })).at(-1)!.globalPosition
      await forwarder.waitFor(head, 120_000)
      await forwarder.stop()
    }
    const docsPath = join(tmp.dir, 'readmodels.db')
    const docs = openEmbeddedDocumentStore({ path: docsPath })
    await run(docs)
    await docs.close()
    // The read-model database is gone; the next start finds an empty one.
    rmSync(docsPath, { force: true })
    rmSync(`${docsPath}-wal`, { force: true })
    rmSync(`${docsPath}-shm`, { force: true })
    const fresh = openEmbeddedDocumentStore({ path: docsPath })
    t.teardown(() => fresh.close())
    await charges(events, `after-${runId}`, 3)
    await run(fresh)
    // And once more with the read-model store down altogether: the forwarder does not need it.
    await charges(events, `down-${runId}`, 2)
    await run(downStore())

    const stored = await events.readAll({ maxCount: 1e6 })
    const messages = await readKafkaTopics({ brokers, clientId, topics: [`${topicPrefix}credits`] })
    const ids = messages.map((m) => m.headers['event-id'])
    t.equal(new Set(ids).size, stored.length, 'every stored event is in the topic')
    t.equal(ids.length, stored.length, `no event was published twice (${ids.length} messages for ${stored.length} events)`)
  })
}
