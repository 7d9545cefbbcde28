// The analytics forwarder against a real Apache Kafka broker (single-node KRaft from Maven
// Central jars, started by `bash scripts/servers/kafka.sh start`, which prints KAFKA_BROKERS=...;
// `npm test` does that). Commands go through the command handler into a SQLite event store, the
// forwarder publishes them, and the test reads the topics back and compares with the store.
// KAFKA_BROKERS set and the broker down: the suite fails (the publisher cannot connect).
// KAFKA_BROKERS unset: nothing to run here; say so and pass.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { openKafkaPublisher, readKafkaTopics, type ConsumedMessage } from '../adapters/kafka/kafkaPublisher.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { creditsStream, ledgerDecider, type CreditCommand } from '../domain/credits/ledger.ts'
import { analyticsForwarder, ANALYTICS_FORWARDER, startAnalyticsForwarder, topicFor, type ForwardedEvent } from '../projections/analyticsForwarder.ts'
import { readCheckpoint, startProjection, CHECKPOINTS } from '../projections/runner.ts'
import type { EventStore, RecordedEvent } from '../ports/eventStore.ts'
import { tempDir } from './support/tmp.ts'
import { embeddedStores } from './support/embeddedStores.ts'
import { ANALYTICS_SCHEMA_VERSION, EVENT_FIELDS, METADATA_FIELDS, TOPICS, publishedData, publishedMetadata } from '../domain/analytics/contract.ts'
import { AccountCommands } from '../commands/accounts.ts'
import { PersonCommands } from '../commands/persons.ts'
import { CreditCommands } from '../commands/credits.ts'
import { OAuthGrants } from '../commands/oauthGrants.ts'
import { sampleEvents, schemaValidator } from './support/analytics.ts'
import { ownKafkaBroker } from './support/kafkaBroker.ts'
import { pollUntil } from './support/pollUntil.ts'
import { checkForwarderLog, forwarderState } from './support/forwarderLog.ts'

const brokersEnv = process.env.KAFKA_BROKERS

if (!brokersEnv) {
  console.error(
    'Kafka analytics-forwarder suite not run: it needs KAFKA_BROKERS (e.g. 127.0.0.1:19092). ' +
      'Run it via `npm test`, which starts Kafka, or: eval "$(bash scripts/servers/kafka.sh start)" && KAFKA_BROKERS=$KAFKA_BROKERS npx tap test/kafka.forwarder.test.ts',
  )
  t.skip('KAFKA_BROKERS not set: the Kafka suite needs KAFKA_BROKERS (npm test starts Kafka and sets it)', () => {})
} else {
  const brokers = brokersEnv.split(',').map((s) => s.trim()).filter(Boolean)
  const clientId = 'notes-test'
  // Every run writes to its own topics, so earlier runs' messages never get in the way.
  const newTopicPrefix = () => `notes.events.test-${randomUUID().slice(0, 8)}.`

  /** Three accounts whose commands interleave, so the global log mixes their streams. */
  async function seedCredits(events: EventStore, accounts: string[], rounds: number, runId: string) {
    const handler = new CommandHandler(events)
    const now = (i: number) => new Date(Date.UTC(2026, 2, 1, 12, 0, i)).toISOString()
    const run = (accountId: string, command: CreditCommand) =>
      handler.handle(creditsStream.of(accountId), command, ledgerDecider, { metadata: { requestId: `req-${runId}-${randomUUID()}` } })
    for (const a of accounts) await run(a, { type: 'OpenCreditAccount', accountId: a, plan: 'pro', now: now(0) })
    for (let i = 1; i <= rounds; i++) {
      for (const [n, a] of accounts.entries()) {
        const chargeId = `ch-${a}-${i}`
        await run(a, { type: 'ChargeCredits', chargeId, operation: 'transcript', cost: 1 + ((i + n) % 9), noteId: `note-${i % 4}`, requestId: null, now: now(i) })
        if (i % 4 === n % 4) await run(a, { type: 'RefundCharge', refundId: `rf-${a}-${i}`, chargeId, reason: 'test refund', now: now(i) })
      }
    }
  }

  const expectedPayload = (e: RecordedEvent): ForwardedEvent => ({
    schemaVersion: ANALYTICS_SCHEMA_VERSION,
    eventId: e.id,
    type: e.type,
    stream: e.streamName,
    revision: e.revision,
    globalPosition: e.globalPosition,
    recordedAt: e.recordedAt,
    data: publishedData(e.type, e.data, false),
    metadata: publishedMetadata(e.metadata),
  })

  const parse = (m: ConsumedMessage): ForwardedEvent => JSON.parse(m.value ?? 'null') as ForwardedEvent

  /** Per key, the revisions in partition (offset) order; and the partitions each key used. */
  function perStream(messages: ConsumedMessage[]) {
    const revisions = new Map<string, number[]>()
    const partitions = new Map<string, Set<string>>()
    for (const m of messages) {
      const key = m.key ?? '<null>'
      revisions.set(key, [...(revisions.get(key) ?? []), parse(m).revision])
      partitions.set(key, (partitions.get(key) ?? new Set()).add(`${m.topic}/${m.partition}`))
    }
    return { revisions, partitions }
  }

  /** Keeps the first message of each event id, as the documented consumer rule says. */
  function dedupe(messages: ConsumedMessage[]): ConsumedMessage[] {
    const seen = new Set<string>()
    return messages.filter((m) => {
      const id = parse(m).eventId
      if (seen.has(id)) return false
      seen.add(id)
      return true
    })
  }

  const byGlobalPosition = (a: { globalPosition: number }, b: { globalPosition: number }) => a.globalPosition - b.globalPosition

  function checkMessages(t: Test, messages: ConsumedMessage[], stored: RecordedEvent[], topicPrefix: string) {
    const storedById = new Map(stored.map((e) => [e.id, e]))
    let badEnvelope = 0
    for (const m of messages) {
      const p = parse(m)
      const e = storedById.get(p.eventId)
      if (!e || m.key !== e.streamName || m.topic !== topicFor(topicPrefix, e.streamName) || m.headers['event-id'] !== e.id || m.headers['event-type'] !== e.type || m.headers['schema-version'] !== String(ANALYTICS_SCHEMA_VERSION)) {
        badEnvelope++
        if (badEnvelope <= 3) t.fail('message envelope matches the stored event', { found: m, stored: e })
      }
    }
    t.equal(badEnvelope, 0, 'every message: topic <prefix><category>, key = stream name, event-id/event-type headers = the stored event')

    const unique = dedupe(messages)
    t.equal(unique.length, stored.length, 'after dedupe by eventId: exactly as many messages as stored events')
    t.same(unique.map(parse).sort(byGlobalPosition), stored.map(expectedPayload), 'after dedupe by eventId: payloads equal the stored events field by field')

    const { revisions, partitions } = perStream(unique)
    const streams = [...new Set(stored.map((e) => e.streamName))]
    t.same([...revisions.keys()].sort(), streams.sort(), 'every stream has its messages, keyed by its name')
    for (const s of streams) {
      const expected = stored.filter((e) => e.streamName === s).map((e) => e.revision)
      t.same(revisions.get(s), expected, `${s}: revisions in partition order are 0..${expected.length - 1}`)
      t.equal(partitions.get(s)?.size, 1, `${s}: all its messages are in one partition`)
    }
  }

  t.test('given commands on three credit accounts, when the forwarder runs, then every stored event is on the category topic, keyed by stream, in revision order', async (t) => {
    const { events, docs } = embeddedStores(t)
    const runId = randomUUID().slice(0, 8)
    await seedCredits(events, [`a-${runId}`, `b-${runId}`, `c-${runId}`], 12, runId)
    // A second category, written straight to the store: it goes to its own topic.
    await events.appendToStream(`note-${runId}`, [{ id: randomUUID(), type: 'NoteCreated', data: { noteId: runId, title: 'x' } }])
    const stored = await events.readAll({ maxCount: 1e6 })
    const last = stored[stored.length - 1]!.globalPosition

    const topicPrefix = newTopicPrefix()
    const publisher = await openKafkaPublisher({ brokers, clientId })
    t.teardown(() => publisher.close())
    const forwarder = startProjection(analyticsForwarder(publisher, { topicPrefix }), { events, docs, batchSize: 7 })
    t.teardown(() => forwarder.stop())
    await forwarder.waitFor(last, 60_000)
    await forwarder.stop()
    t.equal(await readCheckpoint(docs, ANALYTICS_FORWARDER), last, 'the checkpoint is at the last forwarded event')

    const creditsTopic = `${topicPrefix}credits`
    const notesTopic = `${topicPrefix}note`
    const messages = await readKafkaTopics({ brokers, clientId, topics: [creditsTopic, notesTopic] })
    t.equal(messages.filter((m) => m.topic === notesTopic).length, 1, `the notes event is on ${notesTopic}`)
    t.equal(
      messages.filter((m) => m.topic === creditsTopic).length,
      stored.filter((e) => e.streamName.startsWith('credits-')).length,
      `every credits event is on ${creditsTopic}`,
    )
    t.equal(messages.length, stored.length, 'nothing failed, so nothing was published twice')
    checkMessages(t, messages, stored, topicPrefix)
    const sample = parse(messages.find((m) => parse(m).type === 'CreditsCharged')!)
    t.match(sample, { type: 'CreditsCharged', stream: /^credits-/, data: { chargeId: String, cost: Number, balanceAfter: Number }, metadata: { requestId: /^req-/ } }, 'a charge message carries data and metadata')
  })

  t.test('given a forwarder stopped mid-way and restarted, then every event arrives at least once and dedupe by eventId gives exactly the stored events', async (t) => {
    const tmp = tempDir()
    t.teardown(tmp.remove)
    const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
    t.teardown(() => events.close())
    const docsPath = join(tmp.dir, 'readmodels.db')
    const runId = randomUUID().slice(0, 8)
    await seedCredits(events, [`a-${runId}`, `b-${runId}`, `c-${runId}`], 15, runId)
    const stored = await events.readAll({ maxCount: 1e6 })
    const last = stored[stored.length - 1]!.globalPosition
    const topicPrefix = newTopicPrefix()

    // First process: forwards part of the log, then stops (stopAfter).
    let docs = openEmbeddedDocumentStore({ path: docsPath })
    let publisher = await openKafkaPublisher({ brokers, clientId })
    const half = Math.floor(stored.length / 2)
    const first = startProjection(analyticsForwarder(publisher, { topicPrefix }), { events, docs, batchSize: 5, stopAfter: half })
    await first.done
    const stoppedAt = await readCheckpoint(docs, ANALYTICS_FORWARDER)
    t.equal(stoppedAt, stored[half - 1]!.globalPosition, `stopped mid-way, checkpoint after event ${half} of ${stored.length}`)
    // A crash after the broker acknowledged a batch but before its checkpoint was saved looks
    // like this: the checkpoint is behind what Kafka holds. Move it back by 8 events.
    const rewoundTo = stored[half - 1 - 8]!.globalPosition
    await docs.collection(CHECKPOINTS).updateOne({ _id: ANALYTICS_FORWARDER }, { $set: { position: rewoundTo } })
    await publisher.close()
    await docs.close()

    // Second process: a new publisher (new producer id) resumes from the checkpoint.
    docs = openEmbeddedDocumentStore({ path: docsPath })
    t.teardown(() => docs.close())
    publisher = await openKafkaPublisher({ brokers, clientId })
    t.teardown(() => publisher.close())
    const resumed = startProjection(analyticsForwarder(publisher, { topicPrefix }), { events, docs, batchSize: 5 })
    t.teardown(() => resumed.stop())
    await resumed.waitFor(last, 60_000)
    await resumed.stop()
    t.equal(await readCheckpoint(docs, ANALYTICS_FORWARDER), last, 'the checkpoint is at the last event after the restart')

    const messages = await readKafkaTopics({ brokers, clientId, topics: [`${topicPrefix}credits`] })
    const counts = new Map<string, number>()
    for (const m of messages) counts.set(parse(m).eventId, (counts.get(parse(m).eventId) ?? 0) + 1)
    t.ok(
      stored.every((e) => (counts.get(e.id) ?? 0) >= 1),
      'every stored event arrived at least once',
    )
    const duplicated = stored.filter((e) => (counts.get(e.id) ?? 0) > 1)
    t.same(
      duplicated.map((e) => e.globalPosition),
      stored.slice(half - 8, half).map((e) => e.globalPosition),
      'exactly the 8 events between the rewound checkpoint and the stop were published twice (at-least-once)',
    )
    t.equal(messages.length, stored.length + 8, 'and nothing else was duplicated')
    checkMessages(t, messages, stored, topicPrefix)
  })

  t.test('given accounts, keys, people and sessions made through the services and one event of every type, when forwarded, then every message validates against its schema, carries only allowlisted fields, and no secret, hash or email leaves', async (t) => {
    const { events, docs } = embeddedStores(t)
    const run = randomUUID().slice(0, 8)
    const handler = new CommandHandler(events)
    const credits = new CreditCommands(handler)
    const accounts = new AccountCommands(handler, credits, new OAuthGrants(events, handler))
    const persons = new PersonCommands(handler, credits, { sessionSeconds: 3600 })
    const email = `owner-${run}@example.com`
    const password = `pw-${run}-correct horse`
    const { accountId } = await accounts.openAccount({ name: `Acme ${run}`, email, plan: 'pro' })
    const key = await accounts.createApiKey(accountId, 'ci')
    await accounts.revokeApiKey(accountId, key.keyId)
    await persons.register({ accountId, email, password, name: `Ada ${run}` })
    const signedIn = await persons.signIn(email, password, { userAgent: `agent-${run}` })
    t.ok(signedIn, 'signed in')
    await persons.signOut(signedIn!.token)
    await persons.setPassword(email, `${password}-2`)
    for (const e of sampleEvents(run)) await events.appendToStream(e.stream, [{ id: randomUUID(), type: e.type, data: e.data }])
    const stored = await events.readAll({ maxCount: 1e6 })
    // What the store holds and must stay there: every hash and email the services wrote.
    const secrets = [email, password, key.apiKey, key.apiKey.slice('nk_'.length + key.keyId.length + 1), signedIn!.token, `SECRET-${run}`, `leak-${run}@`]
    for (const e of stored) for (const f of ['passwordHash', 'secretHash', 'email', 'personId']) if (typeof e.data[f] === 'string') secrets.push(e.data[f] as string)
    t.ok(secrets.length > 10, `${secrets.length} secret values to look for`)

    const topicPrefix = newTopicPrefix()
    const publisher = await openKafkaPublisher({ brokers, clientId })
    t.teardown(() => publisher.close())
    const forwarder = startProjection(analyticsForwarder(publisher, { topicPrefix }), { events, docs })
    t.teardown(() => forwarder.stop())
    await forwarder.waitFor(stored[stored.length - 1]!.globalPosition, 60_000)
    await forwarder.stop()

    const expectedTopics = [...new Set(stored.map((e) => e.streamName.split('-')[0]!).filter((c) => TOPICS[c]))].map((c) => topicPrefix + c)
    const messages = await readKafkaTopics({ brokers, clientId, topics: expectedTopics })
    const published = stored.filter((e) => TOPICS[e.streamName.split('-')[0]!]?.includes(e.type as never))
    t.equal(messages.length, published.length, `one message per published event (${published.length} of ${stored.length} stored)`)
    const validate = schemaValidator()
    let invalid = 0
    let outside = 0
    for (const m of messages) {
      const v = parse(m)
      const errors = validate(v)
      if (errors.length > 0 && invalid++ < 3) t.fail(`${v.type} validates against its schema`, { errors })
      const extra = [
        ...Object.keys(v.data).filter((k) => !(k in (EVENT_FIELDS as Record<string, object>)[v.type]!)),
        ...Object.keys(v.metadata).filter((k) => !(k in METADATA_FIELDS)),
      ]
      if (extra.length > 0 && outside++ < 3) t.fail(`${v.type}: fields outside the allowlist`, { extra })
    }
    t.equal(invalid, 0, 'every message validates against contract/analytics/<type>.schema.json')
    t.equal(outside, 0, 'no message carries a field outside the allowlist')
    const serialized = messages.map((m) => JSON.stringify(m)).join('\n')
    t.same(secrets.filter((s) => serialized.includes(s)), [], 'no secret, hash, password, token or email appears in any key, value or header')
    t.notOk(serialized.includes(`PERSONAL-${run}`) || serialized.includes(`Ada ${run}`) || serialized.includes(`Acme ${run}`), 'no personal content without an opt-in')
  })

  /** Polls `check` until it is true or the deadline passes. */
  t.test('given a burst of events, when the forwarder goes idle, then its checkpoint is already at the last event, and a restart from it re-publishes nothing', async (t) => {
    const { events, docs } = embeddedStores(t)
    const runId = randomUUID().slice(0, 8)
    const topicPrefix = newTopicPrefix()
    const publisher = await openKafkaPublisher({ brokers, clientId })
    t.teardown(() => publisher.close())
    const first = startProjection(analyticsForwarder(publisher, { topicPrefix }), { events, docs, batchSize: 4 })
    t.teardown(() => first.stop())
    await seedCredits(events, [`a-${runId}`], 6, runId)
    const burst = await events.readAll({ maxCount: 1e6 })
    const last = burst[burst.length - 1]!.globalPosition
    await first.waitFor(last, 60_000)
    // While it runs and nothing new arrives: this is what a kill -9 now would leave behind.
    await pollUntil('idle checkpoint flush', async () => (await readCheckpoint(docs, ANALYTICS_FORWARDER)) === last, 5_000)
    const flushed = await readCheckpoint(docs, ANALYTICS_FORWARDER)
    t.equal(flushed, last, 'idle: the checkpoint was flushed up to the last forwarded event without a stop or a new event')
    await first.stop()
    await docs.collection(CHECKPOINTS).updateOne({ _id: ANALYTICS_FORWARDER }, { $set: { position: flushed } })

    const second = startProjection(analyticsForwarder(publisher, { topicPrefix }), { events, docs })
    t.teardown(() => second.stop())
    await events.appendToStream(`credits-a-${runId}`, [{ id: randomUUID(), type: 'CreditPlanChanged', data: { from: 'pro', to: 'power', adjustment: 0, balanceAfter: 0, at: new Date().toISOString() } }])
    const all = await events.readAll({ maxCount: 1e6 })
    await second.waitFor(all[all.length - 1]!.globalPosition, 60_000)
    await second.stop()
    const messages = await readKafkaTopics({ brokers, clientId, topics: [`${topicPrefix}credits`] })
    t.equal(messages.length, all.length, `the restart published only the new event: ${messages.length} messages for ${all.length} events, no duplicate`)
    t.equal(new Set(messages.map((m) => m.headers['event-id'])).size, all.length, 'every event id once')
  })

  t.test('given Kafka down when the forwarder starts, when Kafka comes up, then the waiting events arrive, with one log line per state change', async (t) => {
    // A broker of its own (the suite's port + 5), so stopping it disturbs nothing else.
    const broker = ownKafkaBroker(brokers, 5)
    await broker.stop().catch(() => {})
    t.teardown(() => broker.stop().catch(() => {}))
    const downBrokers = broker.brokers
    const { events, docs } = embeddedStores(t)
    const runId = randomUUID().slice(0, 8)
    await seedCredits(events, [`a-${runId}`, `b-${runId}`], 4, runId)
    const stored = await events.readAll({ maxCount: 1e6 })
    const last = stored[stored.length - 1]!.globalPosition
    const topicPrefix = newTopicPrefix()
    const lines: string[] = []
    let attempts = 0
    let clientErrorsWhileDown = 0
    const forwarder = startAnalyticsForwarder(
      (state) => (
        attempts++,
        openKafkaPublisher({
          brokers: downBrokers,
          clientId,
          retries: 1,
          connectionTimeoutMs: 500,
          log: () => {
            if (state() !== 'up') clientErrorsWhileDown++
          },
        })
      ),
      { topicPrefix, log: (m) => lines.push(m), initialDelayMs: 100, maxDelayMs: 1000, run: { events, docs } },
    )
    t.teardown(() => forwarder.stop())
    await pollUntil('four connection attempts', () => attempts >= 4, 60_000)
    t.ok(forwarder.position() < stored[0]!.globalPosition, 'nothing forwarded while Kafka is down')
    t.equal(lines.filter((l) => /unreachable/.test(l)).length, 1, `${attempts} failed attempts, one "unreachable" line (kafkajs' ${clientErrorsWhileDown} per-attempt errors kept quiet)`)
    const started = Date.now()
    await broker.start()
    await forwarder.waitFor(last, 120_000)
    t.pass(`all ${stored.length} events forwarded ${Date.now() - started} ms after Kafka was started`)
    await forwarder.stop()
    const messages = await readKafkaTopics({ brokers: downBrokers, clientId, topics: [`${topicPrefix}credits`] })
    t.equal(new Set(messages.map((m) => m.headers['event-id'])).size, stored.length, 'every stored event arrived')
    t.equal(forwarderState(lines[1] ?? ''), 'down', `the outage at start is reported: ${lines[1]}`)
    checkForwarderLog(t, lines)
  })
}
