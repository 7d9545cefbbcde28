// Forwards every domain event to the analytics topics (Kafka when KAFKA_BROKERS is set; see
// app/server.ts). It is a projection without read models: the runner follows the global log
// from the `analytics-forwarder` checkpoint and stores the checkpoint only after `handle`
// resolved, i.e. after the broker acknowledged the whole batch (acks=all).
//
// Topics: `<topicPrefix><category>`, one per stream category (the stream name up to its first
// '-'), e.g. `notes.events.credits` for `credits-<accountId>`. Characters Kafka does not allow
// in a topic name (anything but [a-zA-Z0-9._-]) become '_'.
// Key: the stream name, so all events of a stream land in one partition, in revision order.
// Value: JSON `ForwardedEvent` (domain/analytics/contract.ts). Headers: `event-id` (the dedup
// key), `event-type`, `schema-version`.
//
// What is published is the contract in domain/analytics/contract.ts: only the listed event types
// of the listed categories, only their listed fields; personal fields only on the categories in
// `personalTopics`. Events outside the contract are skipped (the checkpoint still moves past them).
//
// Checkpoint: every batch also writes one small state document (`analytics_forwarder`), so the
// runner saves the checkpoint in the same write as soon as the broker acknowledged the batch. A
// forwarder that then goes idle has nothing pending (the runner skips checkpoints of write-less
// batches for up to CHECKPOINT_LAG_MS, which left the last burst unsaved until the next event),
// and a restart re-publishes at most the batch that was in flight.
//
// Kafka down: `startAnalyticsForwarder` wraps the publisher so that connecting and publishing are
// retried with exponential backoff inside the forwarder, with one log line per state change
// (connecting, unreachable, connected, publish failing, publishing again), never one per attempt.
//
// Delivery is AT-LEAST-ONCE. A crash or a failed publish between the broker's acknowledgement
// and the checkpoint makes the restarted forwarder publish those events again, so a stream's
// partition can hold an event twice (the second copy after the first). Consumers must
// deduplicate by `eventId` (or, per stream, skip events whose `revision` is not above the last
// one they processed); after that they see exactly the stored events, in stream order.
import type { AnalyticsMessage, AnalyticsPublisher, PublishedCheckpoints } from '../ports/analyticsPublisher.ts'
import { categoryOf, readLog, type EventFilter, type EventStore, type RecordedEvent } from '../ports/eventStore.ts'
import { ANALYTICS_SCHEMA_VERSION, isPublished, publishedData, publishedMetadata, type ForwardedEvent } from '../domain/analytics/contract.ts'
import { sleep, startProjection, type Projection, type RunningProjection, type RunOptions } from './runner.ts'
import { metrics } from '../ports/metrics.ts'
import { carrierOf, tracer, type Span } from '../ports/tracing.ts'

export const ANALYTICS_FORWARDER = 'analytics-forwarder'
export const DEFAULT_TOPIC_PREFIX = 'notes.events.'
/** One document per forwarder: the last batch it handed to the broker. */
export const FORWARDER_STATE = 'analytics_forwarder'
type ForwarderState = { _id: string; lastEventId: string; position: number; published: number; at: string }

export type { ForwardedEvent }

export interface AnalyticsForwarderOptions {
  topicPrefix?: string
  /** Only these events (default: every domain event). */
  filter?: EventFilter
  /** Checkpoint name (default `analytics-forwarder`); give each forwarder of one store its own. */
  name?: string
  /** Stream categories (topics without the prefix) whose personal fields are published. */
  personalTopics?: ReadonlySet<string> | readonly string[]
  /**
   * The checkpoint lives with the published messages (the publisher's `checkpoints`, Kafka's
   * checkpoint topic) instead of the read-model store: a read-model loss then re-publishes
   * nothing, and the forwarder does not touch the read-model store at all.
   */
  checkpointsInBroker?: boolean
}

/** Kafka topic names allow [a-zA-Z0-9._-], at most 249 characters. */
export const topicFor = (topicPrefix: string, streamName: string): string =>
  (topicPrefix + categoryOf(streamName)).replace(/[^a-zA-Z0-9._-]/g, '_').slice(0, 249)

/** The message for an event, or null when the contract does not publish it. */
export function toAnalyticsMessage(event: RecordedEvent, topicPrefix = DEFAULT_TOPIC_PREFIX, personalTopics: ReadonlySet<string> = new Set()): AnalyticsMessage | null {
  const category = categoryOf(event.streamName)
  if (!isPublished(category, event.type)) return null
  const value: ForwardedEvent = {
    schemaVersion: ANALYTICS_SCHEMA_VERSION,
    eventId: event.id,
    type: event.type,
    stream: event.streamName,
    revision: event.revision,
    globalPosition: event.globalPosition,
    recordedAt: event.recordedAt,
    data: publishedData(event.type, event.data, personalTopics.has(category)),
    metadata: publishedMetadata(event.metadata),
  }
  return {
    topic: topicFor(topicPrefix, event.streamName),
    key: event.streamName,
    value: JSON.stringify(value),
    headers: { 'event-id': event.id, 'event-type': event.type, 'schema-version': String(ANALYTICS_SCHEMA_VERSION) },
  }
}

export function analyticsForwarder(publisher: AnalyticsPublisher, options: AnalyticsForwarderOptions = {}): Projection {
  const { topicPrefix = DEFAULT_TOPIC_PREFIX, filter, name = ANALYTICS_FORWARDER } = options
  const personal = new Set(options.personalTopics ?? [])
  return {
    name,
    ...(filter ? { filter } : {}),
    collections: [FORWARDER_STATE],
    async handle(events, docs) {
      // Resolves only when every message is acknowledged; a rejection makes the runner retry the
      // same batch (the checkpoint has not moved), which is where duplicates come from.
      const messages: AnalyticsMessage[] = []
      // With tracing on, a producer span per message of a traced event, its context in the
      // message's `traceparent` header: a consumer continues the request's trace.
      const spans: Span[] = []
      const t = tracer()
      for (const e of events) {
        const m = toAnalyticsMessage(e, topicPrefix, personal)
        if (!m) continue
        const parent = t.enabled ? carrierOf(e.metadata) : null
        if (parent) {
          const span = t.startSpan(`kafka publish ${m.topic}`, { kind: 'producer', parent, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': m.topic, 'messaging.message.id': e.id, 'notes.event_type': e.type } })
          spans.push(span)
          m.headers = { ...m.headers, ...span.carrier() }
        }
        messages.push(m)
      }
      try {
        if (messages.length > 0) await publisher.publish(messages)
      } catch (err) {
        for (const s of spans) s.fail(err)
        throw err
      } finally {
        for (const s of spans) s.end()
      }
      metrics().kafkaPublished.inc({}, messages.length)
      // The runner saves the checkpoint in the broker after this batch.
      if (options.checkpointsInBroker) return
      // A write makes the runner save the checkpoint with this batch (see the header).
      const last = events[events.length - 1]!
      await docs
        .collection<ForwarderState>(FORWARDER_STATE)
        .replaceOne({ _id: name }, { _id: name, lastEventId: last.id, position: last.globalPosition, published: messages.length, at: new Date().toISOString() }, { upsert: true })
    },
  }
}

// ---- running against a broker that may be down -----------------------------------------------

export type PublisherState = 'connecting' | 'up' | 'down' | 'closed'

export interface ResilientPublisher extends AnalyticsPublisher {
  checkpoints: PublishedCheckpoints
  state(): PublisherState
  /** When it entered its state (ms since the epoch): with `down` or `connecting`, since when it cannot publish. */
  since(): number
  /** The error that made it `down`, or null. */
  lastError(): string | null
  /**
   * When the oldest publish or checkpoint call still waiting for Kafka began (ms since the
   * epoch), or null when none waits. A broker that stops answering without refusing leaves the
   * state `up` while a call waits out the client's timeouts and retries; this tells it.
   */
  waitingSince(): number | null
}

export interface BackoffOptions {
  /** One line per state change. */
  log: (message: string) => void
  initialDelayMs?: number
  maxDelayMs?: number
  /**
   * How long one publish or checkpoint attempt may wait for Kafka (default 60 s). Past it the
   * attempt counts as failed and the connection is replaced: a request stuck on a broker that
   * stopped answering would otherwise hold every later batch behind it (the client sends one at
   * a time) until the client's own timeouts and retries ran out.
   */
  attemptTimeoutMs?: number
}

/** How long a stop waits for the broker connection to close. */
const CLOSE_WAIT_MS = 5000

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err))

/**
 * A publisher that never gives up while open: `connect` is retried with exponential backoff
 * until a broker answers, and a failed publish is retried the same way (on a fresh connection
 * when the old one is gone). `publish` resolves once the batch is acknowledged and rejects only
 * when the publisher is closed, so the runner never sees Kafka's outages.
 */
export function resilientPublisher(connect: () => Promise<AnalyticsPublisher>, options: BackoffOptions): ResilientPublisher {
  const { log, initialDelayMs = 500, maxDelayMs = 30_000, attemptTimeoutMs = 60_000 } = options
  let state: PublisherState = 'connecting'
  let since = Date.now()
  let lastError: string | null = null
  let inner: AnalyticsPublisher | null = null
  let connecting: Promise<AnalyticsPublisher> | null = null
  const closed = new AbortController()
  const become = (next: PublisherState, message: string, err?: unknown) => {
    if (next === 'down') lastError = errorText(err)
    else if (next === 'up') lastError = null
    if (next === state) return
    // `connecting` then `down` is one outage: it started when the publisher could first not publish.
    if (!(state === 'connecting' && next === 'down')) since = Date.now()
    state = next
    log(`analytics forwarder: ${message}`)
  }
  const isClosed = () => closed.signal.aborted
  const ensure = (): Promise<AnalyticsPublisher> =>
    (connecting ??= (async () => {
      for (let delay = initialDelayMs; ; delay = Math.min(maxDelayMs, delay * 2)) {
        if (isClosed()) throw new Error('analytics publisher is closed')
        try {
          const p = await connect()
          if (isClosed()) {
            await p.close().catch(() => {})
            throw new Error('analytics publisher is closed')
          }
          inner = p
          become('up', 'Kafka connected')
          return p
        } catch (err) {
          if (isClosed()) throw err
          metrics().kafkaPublishFailures.inc({ stage: 'connect' })
          become('down', `Kafka unreachable (${errorText(err)}); retrying with backoff up to ${Math.round(maxDelayMs / 1000)} s, quietly until it answers`, err)
          await sleep(delay, closed.signal)
        }
      }
    })())
  // Connect at once, not at the first event: an outage shows in the log even while idle.
  void ensure().catch(() => {})
  /** Drops a connection whose request hangs: the next attempt connects afresh. Its close may wait for that request, so nobody waits for it. */
  const abandon = (p: AnalyticsPublisher) => {
    if (inner !== p) return
    inner = null
    connecting = null
    void p.close().catch(() => {})
  }
  const withinAttempt = <T>(attempt: Promise<T>, onTimeout: () => void): Promise<T> => {
    let timer: NodeJS.Timeout | undefined
    let onClose = () => {}
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => (onTimeout(), reject(new Error(`no answer from Kafka within ${attemptTimeoutMs} ms; reconnecting`))), attemptTimeoutMs)
      // A stop ends the wait too.
      onClose = () => reject(new Error('analytics publisher is closed'))
      closed.signal.addEventListener('abort', onClose, { once: true })
    })
    return Promise.race([attempt, deadline]).finally(() => (clearTimeout(timer), closed.signal.removeEventListener('abort', onClose)))
  }
  const waiting = new Set<{ at: number }>()
  /** `op` on the connected publisher, retried with backoff until it succeeds or the publisher closes. */
  const retrying = async <T>(op: (p: AnalyticsPublisher) => Promise<T>, what: string, retried: string): Promise<T> => {
    const call = { at: Date.now() }
    waiting.add(call)
    try {
      for (let delay = initialDelayMs; ; delay = Math.min(maxDelayMs, delay * 2)) {
        const p = await ensure()
        try {
          const result = await withinAttempt(op(p), () => abandon(p))
          become('up', 'Kafka publishing again')
          return result
        } catch (err) {
          if (isClosed()) throw err
          metrics().kafkaPublishFailures.inc({ stage: what === 'publish' ? 'publish' : 'checkpoint' })
          become('down', `Kafka ${what} failing (${errorText(err)}); retrying ${retried} with backoff up to ${Math.round(maxDelayMs / 1000)} s`, err)
          await sleep(delay, closed.signal)
        }
      }
    } finally {
      waiting.delete(call)
    }
  }
  return {
    state: () => state,
    since: () => since,
    lastError: () => lastError,
    waitingSince: () => (waiting.size === 0 ? null : Math.min(...[...waiting].map((c) => c.at))),
    publish: (messages) => retrying((p) => p.publish(messages), 'publish', 'the batch'),
    checkpoints: {
      read: (name) => retrying((p) => (p.checkpoints ? p.checkpoints.read(name) : Promise.reject(new Error('this publisher keeps no checkpoints'))), 'checkpoint read', 'it'),
      save: (name, position) => retrying((p) => (p.checkpoints ? p.checkpoints.save(name, position) : Promise.reject(new Error('this publisher keeps no checkpoints'))), 'checkpoint save', 'it'),
    },
    async close() {
      if (isClosed()) return
      closed.abort()
      state = 'closed'
      // Bounded: a connection's close waits for its request in flight, which a silent broker never answers.
      let timer: NodeJS.Timeout | undefined
      await Promise.race([inner?.close().catch(() => {}), new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))]).finally(() => clearTimeout(timer))
    },
  }
}

/**
 * Checkpoints kept under the forwarder's name and the id of the log's first event: a broker that
 * outlived its event log (a new deployment, a test's fresh store on a kept broker) holds a
 * position of another log, which would skip this log's events up to it. Under its own key, a new
 * log starts from the beginning. With an empty log there is nothing to read or save yet.
 */
export function logScoped(checkpoints: PublishedCheckpoints, events: EventStore): PublishedCheckpoints {
  let logId: string | null = null
  const key = async (name: string): Promise<string | null> => {
    logId ??= (await readLog(events, { maxCount: 1 }))[0]?.id ?? null
    return logId === null ? null : `${name}@${logId}`
  }
  return {
    async read(name) {
      const k = await key(name)
      return k === null ? null : checkpoints.read(k)
    },
    async save(name, position) {
      const k = await key(name)
      if (k !== null) await checkpoints.save(k, position)
    },
  }
}

export interface StartForwarderOptions extends AnalyticsForwarderOptions, BackoffOptions {
  run: RunOptions
  /** Wraps the projection before it runs (the lease that lets one of several instances write); gets the checkpoints a takeover reads. */
  wrap?: (projection: Projection, checkpoints: PublishedCheckpoints) => Projection
}

/**
 * Starts the forwarder at once, whether or not Kafka answers: events wait in the log until it
 * does. `connect` receives the publisher's state so the client library's own per-attempt errors
 * can be kept quiet while the broker is known to be down. `stop` closes the publisher first, so
 * a stop during an outage does not wait for Kafka.
 */
export function startAnalyticsForwarder(connect: (state: () => PublisherState) => Promise<AnalyticsPublisher>, options: StartForwarderOptions): RunningProjection & { publisher: ResilientPublisher } {
  const { run, log, initialDelayMs, maxDelayMs, attemptTimeoutMs, wrap = (p) => p, ...forwarderOptions } = options
  let publisher: ResilientPublisher
  const getState = () => publisher.state()
  publisher = resilientPublisher(() => connect(getState), { log, ...(initialDelayMs !== undefined ? { initialDelayMs } : {}), ...(maxDelayMs !== undefined ? { maxDelayMs } : {}), ...(attemptTimeoutMs !== undefined ? { attemptTimeoutMs } : {}) })
  log('analytics forwarder: connecting to Kafka')
  const checkpoints = logScoped(publisher.checkpoints, run.events)
  const running = startProjection(wrap(analyticsForwarder(publisher, forwarderOptions), checkpoints), forwarderOptions.checkpointsInBroker ? { ...run, checkpoints } : run)
  return {
    ...running,
    publisher,
    name: running.name,
    position: () => running.position(),
    waitFor: (p, t) => running.waitFor(p, t),
    done: running.done,
    async stop() {
      const stopping = running.stop()
      await publisher.close()
      await stopping
    },
  }
}
