// The Kafka consumer of docs/kafka.md (docs/examples/kafka-consumer.ts), run as a reader runs it,
// against a real broker (`npm test` starts one and sets KAFKA_BROKERS). The real forwarder
// publishes a ledger's events, then a batch of them again (what a forwarder that crashed before
// its checkpoint does), then one more event: the example must print every event once, in order.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { spawn } from 'node:child_process'
import { openKafkaPublisher, readKafkaTopics } from '../adapters/kafka/kafkaPublisher.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { creditsStream, ledgerDecider, type CreditCommand } from '../domain/credits/ledger.ts'
import { analyticsForwarder, toAnalyticsMessage } from '../projections/analyticsForwarder.ts'
import { startProjection } from '../projections/runner.ts'
import type { AnalyticsMessage } from '../ports/analyticsPublisher.ts'
import { embeddedStores } from './support/embeddedStores.ts'
import { pollUntil } from './support/pollUntil.ts'

const brokersEnv = process.env.KAFKA_BROKERS

if (!brokersEnv) {
  console.error('The Kafka consumer example needs KAFKA_BROKERS: run it via `npm test`, or: eval "$(bash scripts/servers/kafka.sh start)" && npx tap test/docs.kafkaConsumer.test.ts')
  t.skip('KAFKA_BROKERS not set: npm test starts Kafka and sets it', () => {})
} else {
  t.test('given a ledger forwarded to Kafka with a batch delivered twice, when the docs example consumes it, then it prints every event exactly once, in order', async (t) => {
    const { events, docs } = embeddedStores(t)
    const topicPrefix = `notes.events.docs-${randomUUID().slice(0, 8)}.`
    const publisher = await openKafkaPublisher({ brokers: brokersEnv.split(','), clientId: 'notes-test-docs' })
    t.teardown(() => publisher.close())

    // One account: one stream, so one key and one partition, and the order of the log is kept.
    const accountId = randomUUID()
    const handler = new CommandHandler(events)
    const now = new Date().toISOString()
    const run = (command: CreditCommand) => handler.handle(creditsStream.of(accountId), command, ledgerDecider)
    await run({ type: 'OpenCreditAccount', accountId, plan: 'pro', now })
    for (let i = 1; i <= 5; i++) await run({ type: 'ChargeCredits', chargeId: `ch-${i}`, operation: 'transcript', cost: i, noteId: null, requestId: null, now })
    const forward = async () => {
      const stored = await events.readAll({ maxCount: 1e6 })
      const forwarder = startProjection(analyticsForwarder(publisher, { topicPrefix }), { events, docs })
      await forwarder.waitFor(stored[stored.length - 1]!.globalPosition, 60_000)
      await forwarder.stop()
      return stored
    }
    const first = await forward()
    // The redelivery: the same messages again, as the forwarder makes them.
    await publisher.publish(first.map((e) => toAnalyticsMessage(e, topicPrefix)).filter((m): m is AnalyticsMessage => m !== null))
    await run({ type: 'ChargeCredits', chargeId: 'ch-last', operation: 'transcript', cost: 1, noteId: null, requestId: null, now })
    const stored = await forward()
    const last = stored[stored.length - 1]!

    const child = spawn(process.execPath, ['--import', 'tsx', 'docs/examples/kafka-consumer.ts'], {
      env: { ...process.env, KAFKA_BROKERS: brokersEnv, KAFKA_TOPIC_PREFIX: topicPrefix, TOPICS: 'credits', GROUP_ID: `docs-${randomUUID()}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')))
    const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { eventId: string; type: string; stream: string; revision: number })
    // The last event comes after the duplicates in the partition: once it is printed, they were read.
    await pollUntil(`the example printing the last event (stderr: ${err})`, () => lines().some((l) => l.eventId === last.id), 90_000)

    t.same(
      lines(),
      stored.map((e) => ({ eventId: e.id, type: e.type, stream: e.streamName, revision: e.revision, data: JSON.parse(toAnalyticsMessage(e, topicPrefix)!.value).data })),
      'each stored event once, in the order of its stream, with its data',
    )
    const onTopic = await readKafkaTopics({ brokers: brokersEnv.split(','), clientId: 'notes-test-docs', topics: [`${topicPrefix}credits`] })
    t.equal(onTopic.length, stored.length + first.length, 'the topic does hold the redelivered batch, which the example skipped')
    child.kill('SIGTERM')
    t.equal(await exited, 0, 'it disconnects and exits on SIGTERM')
  })
}
