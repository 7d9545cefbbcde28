// Issue 14, item 7: Kafka going down while the forwarder runs. The service runs as its own
// process (test/support/serviceProcess.ts with ROLES=forwarder: app/server.ts's wiring, its
// logging included) against a broker of this test's own; the test keeps appending ledger events
// to the service's SQLite store, stops the broker (controlled shutdown), goes on appending, and
// starts it again. Then every appended event is on its topic at least once, deduplicating by the
// event-id header gives exactly the published part of the store, the outage was reported and so
// was the recovery (one line per state change, not one per failed call; on a loaded machine Kafka
// may fail and recover more than once around the restart, and each time must be reported), and
// the process never exited.
// KAFKA_BROKERS unset: nothing to run (the suite's broker port locates this test's own broker).
import t from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { readKafkaTopics } from '../adapters/kafka/kafkaPublisher.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { creditsStream, ledgerDecider, type CreditCommand } from '../domain/credits/ledger.ts'
import { toAnalyticsMessage } from '../projections/analyticsForwarder.ts'
import { embeddedEnv } from './support/embeddedEnv.ts'
import { ownKafkaBroker } from './support/kafkaBroker.ts'
import { freePorts } from './support/mcp.ts'
import { tempDir } from './support/tmp.ts'
import { schemaValidator } from './support/analytics.ts'
import { pollUntil } from './support/pollUntil.ts'
import { checkForwarderLog, forwarderState, type ForwarderState } from './support/forwarderLog.ts'

const brokersEnv = process.env.KAFKA_BROKERS

/** Polls `check` until it is true or the deadline passes. */
if (!brokersEnv) {
  t.skip('KAFKA_BROKERS not set: the Kafka outage test needs a Kafka install (npm test starts Kafka and sets it)', () => {})
} else {
  t.test('given the forwarder running and events being appended, when Kafka stops and starts again, then every event arrives, the outage and the recovery are reported, and the process stays up', async (t) => {
    // The suite's port + 7 (+ 8 for its controller): the down-at-start test uses + 5 and + 6.
    const broker = ownKafkaBroker(brokersEnv.split(','), 7)
    await broker.stop().catch(() => {})
    t.teardown(() => broker.stop().catch(() => {}))
    await broker.start()

    const tmp = tempDir('kafka-outage-')
    t.teardown(tmp.remove)
    const topicPrefix = `notes.events.outage-${randomUUID().slice(0, 8)}.`
    const [port, mcpPort] = await freePorts(2)
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/serviceProcess.ts'], {
      env: {
        ...embeddedEnv(),
        DATA_DIR: tmp.dir,
        PORT: String(port),
        MCP_PORT: String(mcpPort),
        ROLES: 'forwarder',
        KAFKA_BROKERS: broker.brokers.join(','),
        KAFKA_TOPIC_PREFIX: topicPrefix,
        LOG_LEVEL: 'info',
        DIARIZATION: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    let stdout = ''
    child.stderr!.on('data', (d) => (stderr += d))
    child.stdout!.on('data', (d) => (stdout += d))
    let exited: string | null = null
    child.once('exit', (code, signal) => (exited = `code ${code}, signal ${signal}`))
    t.teardown(async () => {
      if (exited === null) {
        const gone = new Promise((r) => child.once('exit', r))
        child.kill('SIGTERM')
        await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))])
        if (exited === null) child.kill('SIGKILL')
      }
    })
    await pollUntil('the service process is ready', () => stdout.includes('{"ready":true') || exited !== null, 120_000, 100)
    t.equal(exited, null, 'the service process started')
    const forwarderLines = () => stderr.split('\n').filter((l) => l.startsWith('analytics forwarder:'))
    /** Index of the first line from `from` on that reports `state`, or -1. */
    const reported = (state: ForwarderState, from = 0) => forwarderLines().findIndex((l, i) => i >= from && forwarderState(l) === state)

    // The test's own writer on the service's store: a charge and its refund per round, on two
    // accounts, so the balance never runs out however long the outage lasts.
    const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
    t.teardown(() => events.close())
    const handler = new CommandHandler(events)
    const run = (accountId: string, command: CreditCommand) => handler.handle(creditsStream.of(accountId), command, ledgerDecider, { metadata: { requestId: `req-${randomUUID()}` } })
    const accounts = [`out-a-${randomUUID().slice(0, 8)}`, `out-b-${randomUUID().slice(0, 8)}`]
    for (const a of accounts) await run(a, { type: 'OpenCreditAccount', accountId: a, plan: 'pro', now: new Date().toISOString() })
    let rounds = 0
    let appending = true
    const appender = (async () => {
      while (appending) {
        const a = accounts[rounds % accounts.length]!
        const chargeId = `ch-${rounds}`
        const now = new Date().toISOString()
        await run(a, { type: 'ChargeCredits', chargeId, operation: 'transcript', cost: 1, noteId: null, requestId: null, now })
        await run(a, { type: 'RefundCharge', refundId: `rf-${rounds}`, chargeId, reason: 'outage test', now })
        rounds++
        // The rate of a busy service, not a wait for anything.
        await new Promise((r) => setTimeout(r, 20))
      }
    })()
    t.teardown(async () => {
      appending = false
      await appender.catch(() => {})
    })
    const roundsAfter = async (from: number, n: number, what: string) => pollUntil(what, () => rounds >= from + n, 60_000, 100)

    const creditsTopic = `${topicPrefix}credits`
    // The test's reader polls topics that may not exist yet: its complaints are expected.
    const quiet = () => {}
    const onTopic = async () => (await readKafkaTopics({ brokers: broker.brokers, clientId: 'outage-test', topics: [creditsTopic], timeoutMs: 20_000, log: quiet }).catch(() => [])).length
    await pollUntil('the first events on the credits topic', async () => (await onTopic()) > 0, 120_000, 100)
    t.ok(reported('up') >= 0, 'the forwarder connected and published')

    // Down, mid-run (from a forwarder that is up: a new outage is then a new line).
    await pollUntil('the forwarder is up', () => forwarderState(forwarderLines().at(-1) ?? '') === 'up', 120_000, 100)
    const stoppedAt = rounds
    const linesBeforeStop = forwarderLines().length
    await broker.stop()
    const stopped = Date.now()
    await roundsAfter(stoppedAt, 20, 'appending goes on while Kafka is down')
    // On failure, say what the forwarder did say since the stop.
    await pollUntil('the forwarder reports the outage', () => reported('down', linesBeforeStop) >= 0, 180_000, 100).catch((err: Error) => {
      throw new Error(`${err.message}; its lines since the stop: ${JSON.stringify(forwarderLines().slice(linesBeforeStop))}`)
    })
    const outageLine = reported('down', linesBeforeStop)
    t.pass(`the forwarder reported the outage ${Date.now() - stopped} ms after the broker stopped: ${forwarderLines()[outageLine]}`)
    const downFor = rounds
    await roundsAfter(downFor, 20, 'appending goes on after the failure was noticed')
    t.equal(exited, null, 'the process is still running during the outage')

    // Up again.
    const restarted = Date.now()
    await broker.start()
    await pollUntil('the forwarder reports the recovery', () => reported('up', outageLine + 1) >= 0, 180_000, 100)
    t.pass(`reported publishing again ${Date.now() - restarted} ms after the broker was started`)
    await roundsAfter(rounds, 20, 'appending after the broker is back')
    appending = false
    await appender
    t.ok(rounds > stoppedAt + 40, `${rounds} rounds appended (${stoppedAt} before the stop)`)

    // Every published event of the store, deduplicated by event-id, is on the topics.
    const stored = await events.readAll({ maxCount: 1e6 })
    const expected = stored.map((e) => toAnalyticsMessage(e, topicPrefix)).filter((m) => m !== null)
    const topics = [...new Set(expected.map((m) => m.topic))]
    const expectedIds = expected.map((m) => m.headers!['event-id']!).sort()
    let consumed: Awaited<ReturnType<typeof readKafkaTopics>> = []
    let received: string[] = []
    await pollUntil(
      'every stored event on its topic',
      async () => {
        const messages = await readKafkaTopics({ brokers: broker.brokers, clientId: 'outage-test', topics, timeoutMs: 30_000, log: quiet }).catch(() => [])
        consumed = messages
        received = messages.map((m) => m.headers['event-id']!)
        const got = new Set(received)
        return expectedIds.every((id) => got.has(id))
      },
      180_000,
      100,
    )
    const unique = [...new Set(received)].sort()
    const validate = schemaValidator()
    t.same([...new Set(consumed.flatMap((m) => validate(JSON.parse(m.value!))))], [], 'every consumed message validates against its schema')
    t.same(unique, expectedIds, `deduplicated by event-id: exactly the ${expectedIds.length} published events of the store (${received.length - unique.length} duplicates, at-least-once)`)

    // Everything is on the topics, so the forwarder is up: its last word must say so.
    t.ok(checkForwarderLog(t, forwarderLines()) >= 1, 'the outage is among those reported')
    const kafkajsLines = stderr.split('\n').filter((l) => l.startsWith('[kafkajs]'))
    t.same(kafkajsLines.slice(0, 5), [], `no per-attempt line of the client library at LOG_LEVEL info (${kafkajsLines.length} lines)`)
    t.same(stderr.split('\n').filter((l) => l.startsWith('[loop ')), [], 'the forwarder loop never failed or gave up')
    t.equal(exited, null, 'the forwarder process is still running')
  })
}
