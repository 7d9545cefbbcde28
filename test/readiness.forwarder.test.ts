// The forwarder's readiness when Kafka does not refuse but does not answer either (a broker
// stopped mid-request, a half-open connection): the publish waits out the client's timeouts and
// retries, the publisher's state stays `up`, and readiness said "ready" for the whole outage
// (test/scale.faults.test.ts failed so once in CI: 120 s of 200 with Kafka down). And a forwarder
// stuck anywhere else (its lease, a batch past its deadline) leaves events waiting while its
// position does not move: that is said too.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { pollUntil } from './support/pollUntil.ts'
import { embeddedStores } from './support/embeddedStores.ts'
import { startAnalyticsForwarder } from '../projections/analyticsForwarder.ts'
import { readinessOf } from '../app/readiness.ts'
import type { AnalyticsPublisher } from '../ports/analyticsPublisher.ts'
import type { RunningProjection } from '../projections/runner.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'

const engine = { engine: 'openai-compatible', provider: 'test', model: 'test' } as SpeechEngine

function givenALog(t: Test) {
  const { events, docs } = embeddedStores(t)
  const append = () => events.appendToStream(`note-${randomUUID()}`, [{ id: randomUUID(), type: 'NoteCreated', data: { title: 'x' } }])
  return { events, docs, append }
}

t.test('given a broker that accepts the connection and then never answers a publish, when readiness is asked past FORWARDER_MAX_DOWN_SECONDS, then the forwarder is not ready and says Kafka', async (t) => {
  const { events, docs, append } = givenALog(t)
  let answer = true
  const sent: number[] = []
  // A silent broker's requests end only when the client disconnects (as kafkajs' do).
  const hanging = new Set<(err: Error) => void>()
  const connect = async (): Promise<AnalyticsPublisher> => ({
    publish: (messages) => (answer ? (sent.push(messages.length), Promise.resolve()) : new Promise((_, reject) => hanging.add(reject))),
    async close() {
      for (const reject of hanging) reject(new Error('disconnected'))
    },
  })
  const forwarder = startAnalyticsForwarder(connect, { log: () => {}, initialDelayMs: 1, maxDelayMs: 4, run: { events, docs } })
  t.teardown(() => forwarder.stop())
  const readiness = readinessOf({ events, docs, projections: [forwarder], forwarder: { running: forwarder, publisher: forwarder.publisher }, engine, roles: new Set(['forwarder']), thresholds: { maxLag: 500, stallSeconds: 60, forwarderMaxDownSeconds: 1 } })

  await append()
  await pollUntil('the first event published', () => sent.length > 0, 10_000)
  await pollUntil('the forwarder caught up', async () => (await readiness()).forwarder?.behind === 0, 10_000)
  t.same((await readiness()).reasons, [], 'ready while Kafka answers')

  answer = false
  await append()
  const r = await pollUntil('not ready', async () => {
    const r = await readiness()
    return r.ready ? null : r
  }, 10_000)
  t.equal(forwarder.publisher.state(), 'up', 'nothing refused: the publisher still thinks it is up')
  t.match(r.reasons, [/^kafka: the forwarder cannot publish for \d+ s \(a batch has waited \d+ s for Kafka's answer; FORWARDER_MAX_DOWN_SECONDS 1\)$/])
  t.match(r.kafka, { state: 'up', downSeconds: Number })
  t.ok(r.kafka!.downSeconds >= 1)
})

t.test('given a forwarder that is stuck without publishing, when events wait past READY_STALL_SECONDS, then it is not ready and says its position has not moved', async (t) => {
  const { events, docs, append } = givenALog(t)
  // The forwarder loop itself is stuck (here: a fake whose position never moves); Kafka is fine.
  const publisher = { state: () => 'up' as const, since: () => Date.now(), lastError: () => null, waitingSince: () => null }
  const running = { name: 'analytics-forwarder', position: () => -1, status: () => ({ state: 'retrying', since: new Date().toISOString(), retries: 3, lastError: 'the batch of 1 event(s) did not finish within 20000 ms' }) } as unknown as RunningProjection
  const readiness = readinessOf({ events, docs, projections: [running], forwarder: { running, publisher } as never, engine, roles: new Set(['forwarder']), thresholds: { maxLag: 500, stallSeconds: 1, forwarderMaxDownSeconds: 60 } })
  t.same((await readiness()).reasons, [], 'nothing to publish: ready')
  // Idle longer than the threshold: the events that then arrive have not waited that long.
  await new Promise((r) => setTimeout(r, 1500))
  await append()
  t.same((await readiness()).reasons, [], 'an event just appended after an idle time is no stall')

  const r = await pollUntil('not ready', async () => {
    const r = await readiness()
    return r.ready ? null : r
  }, 10_000)
  t.match(r.reasons, [/^forwarder: 1 events to publish and its position has not moved for \d+ s \(READY_STALL_SECONDS 1; the batch of 1 event\(s\) did not finish within 20000 ms\)$/])
})
