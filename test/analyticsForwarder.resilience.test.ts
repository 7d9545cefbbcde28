// The forwarder's wrapper around a broker that may be down, with a fake publisher (no Kafka):
// connection and publish failures are retried with backoff, logged once per state change, and a
// close during an outage ends at once. test/kafka.forwarder.test.ts does it with a real broker.
import t from 'tap'
import { resilientPublisher } from '../projections/analyticsForwarder.ts'
import type { AnalyticsMessage, AnalyticsPublisher } from '../ports/analyticsPublisher.ts'
import { pollUntil } from './support/pollUntil.ts'
import { checkForwarderLog } from './support/forwarderLog.ts'

const msg: AnalyticsMessage = { topic: 't', key: 'k', value: '{}' }

function fakeBroker() {
  let up = false
  let failPublishes = 0
  const sent: AnalyticsMessage[][] = []
  let connects = 0
  const connect = async (): Promise<AnalyticsPublisher> => {
    connects++
    if (!up) throw new Error('ECONNREFUSED')
    return {
      async publish(messages) {
        if (failPublishes > 0) (failPublishes--, await Promise.reject(new Error('broker gone')))
        sent.push([...messages])
      },
      async close() {},
    }
  }
  return { connect, sent, start: () => (up = true), failNext: (n: number) => (failPublishes = n), connects: () => connects }
}

t.test('given the broker down at start, when it comes up, then the waiting publish goes through and the log has one line per state change', async (t) => {
  const broker = fakeBroker()
  const lines: string[] = []
  const p = resilientPublisher(broker.connect, { log: (l) => lines.push(l), initialDelayMs: 1, maxDelayMs: 4 })
  t.teardown(() => p.close())
  const published = p.publish([msg])
  await pollUntil('ten connection attempts', () => broker.connects() >= 10, 5000, 5)
  t.equal(p.state(), 'down')
  t.equal(lines.length, 1, `${broker.connects()} failed connects, one log line`)
  broker.start()
  await published
  t.same(broker.sent, [[msg]], 'published once the broker answered')
  t.match(lines, [/Kafka unreachable \(ECONNREFUSED\)/, /Kafka connected/])
})

t.test('given failing publishes, then the batch is retried until acknowledged, with one line for the failure and one for the recovery', async (t) => {
  const broker = fakeBroker()
  broker.start()
  const lines: string[] = []
  const p = resilientPublisher(broker.connect, { log: (l) => lines.push(l), initialDelayMs: 1, maxDelayMs: 4 })
  t.teardown(() => p.close())
  await p.publish([msg])
  broker.failNext(5)
  await p.publish([msg, msg])
  t.same(broker.sent, [[msg], [msg, msg]], 'the failed batch was published whole once it went through')
  t.match(lines, [/Kafka connected/, /Kafka publish failing \(broker gone\)/, /Kafka publishing again/])
  t.equal(lines.length, 3, '5 failed attempts, 2 lines')
})

t.test('given two outages in a row (a loaded machine around a restart), then each is reported and so is each recovery', async (t) => {
  const broker = fakeBroker()
  broker.start()
  const lines = ['analytics forwarder: connecting to Kafka']
  const p = resilientPublisher(broker.connect, { log: (l) => lines.push(l), initialDelayMs: 1, maxDelayMs: 4 })
  t.teardown(() => p.close())
  await p.publish([msg])
  for (const failures of [3, 2]) {
    broker.failNext(failures)
    await p.publish([msg])
  }
  t.equal(checkForwarderLog(t, lines), 2, 'two outages, two recoveries, one line each')
})

t.test('given the broker down, when the publisher is closed, then the waiting publish rejects at once', async (t) => {
  const broker = fakeBroker()
  const p = resilientPublisher(broker.connect, { log: () => {}, initialDelayMs: 1000, maxDelayMs: 1000 })
  const published = p.publish([msg])
  await pollUntil('a connection attempt', () => broker.connects() >= 1, 5000, 5)
  const started = Date.now()
  await p.close()
  await t.rejects(published, /closed/)
  t.ok(Date.now() - started < 500, 'no wait for the backoff')
})

t.test('given a connection whose publish never answers (a broker stopped mid-request), then the attempt is given up after attemptTimeoutMs and the batch goes out on a fresh connection', async (t) => {
  const sent: AnalyticsMessage[][] = []
  const closed: number[] = []
  let connects = 0
  // The first connection swallows every request; later ones answer.
  const connect = async (): Promise<AnalyticsPublisher> => {
    const n = ++connects
    return {
      publish: (messages) => (n === 1 ? new Promise(() => {}) : (sent.push([...messages]), Promise.resolve())),
      async close() {
        closed.push(n)
        // Like kafkajs' publisher: its close waits for the request in flight, here for ever.
        if (n === 1) await new Promise(() => {})
      },
    }
  }
  const lines: string[] = []
  const p = resilientPublisher(connect, { log: (l) => lines.push(l), initialDelayMs: 1, maxDelayMs: 4, attemptTimeoutMs: 100 })
  t.teardown(() => p.close())
  await p.publish([msg])
  t.same(sent, [[msg]], 'published on the second connection')
  t.same(closed, [1], 'the stuck connection was let go')
  t.equal(p.waitingSince(), null, 'nothing waits any more')
  t.match(lines, [/Kafka connected/, /Kafka publish failing \(no answer from Kafka within 100 ms; reconnecting\)/, /Kafka connected/])
})

t.test('given a publish stuck on a silent broker, when the publisher is closed, then the close does not wait for that request', async (t) => {
  const connect = async (): Promise<AnalyticsPublisher> => ({
    publish: () => new Promise(() => {}),
    close: () => new Promise(() => {}),
  })
  const p = resilientPublisher(connect, { log: () => {}, initialDelayMs: 1, maxDelayMs: 4 })
  void p.publish([msg]).catch(() => {})
  await pollUntil('a publish waiting', () => p.waitingSince() !== null, 5000, 5)
  const started = Date.now()
  await p.close()
  t.ok(Date.now() - started < 10_000, `closed in ${Date.now() - started} ms`)
})
