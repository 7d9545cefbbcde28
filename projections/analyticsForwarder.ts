// Forwards every domain event to the analytics topics (Kafka when KAFKA_BROKERS is set; see
// app/server.ts). It is a projection without read models: the runner follows the global log
// from the `analytics-forwarder` checkpoint and stores the checkpoint only after `handle`
// resolved, i.e. after the broker acknowledged the whole batch (acks=all).
//
// Topics: `<topicPrefix><category>`, one per stream category (the stream name up to its first
// '-'), e.g. `notes.events.credits` for `credits-<accountId>`. Characters Kafka does not allow
// in a topic name (anything but [a-zA-Z0-9._-]) become '_'.
// Key: the stream name, so all events of a stream land in one partition, in revision order.
// Value: JSON `ForwardedEvent` (below). Headers: `event-id` (the dedup key), `event-type`,
// `schema-version`.
//
// What is published is the contract in domain/analytics/contract.ts: only the listed event types
// of the listed categories, only their listed fields; personal fields only on the categories in
// `personalTopics`. Events outside the contract are skipped (the checkpoint still moves past them).
//
// Delivery is AT-LEAST-ONCE. A crash or a failed publish between the broker's acknowledgement
// and the checkpoint makes the restarted forwarder publish those events again, so a stream's
// partition can hold an event twice (the second copy after the first). Consumers must
// deduplicate by `eventId` (or, per stream, skip events whose `revision` is not above the last
// one they processed); after that they see exactly the stored events, in stream order.
import type { AnalyticsMessage, AnalyticsPublisher } from '../ports/analyticsPublisher.ts'
import { categoryOf, type EventFilter, type RecordedEvent } from '../ports/eventStore.ts'
import { ANALYTICS_SCHEMA_VERSION, isPublished, publishedData, publishedMetadata } from '../domain/analytics/contract.ts'
import type { Projection } from './runner.ts'

export const ANALYTICS_FORWARDER = 'analytics-forwarder'
export const DEFAULT_TOPIC_PREFIX = 'notes.events.'

/** The JSON value of every message on the analytics topics (schema `ANALYTICS_SCHEMA_VERSION`). */
export interface ForwardedEvent {
  schemaVersion: number
  /** The event's id (UUID): the deduplication key. */
  eventId: string
  type: string
  /** Stream name, e.g. `credits-acc-1`; also the message key. */
  stream: string
  /** Position within the stream, from 0, without gaps. */
  revision: number
  /** Position in the global log: increasing in commit order, not contiguous. */
  globalPosition: number
  /** ISO 8601 commit time. */
  recordedAt: string
  data: Record<string, unknown>
  metadata: Record<string, unknown>
}

export interface AnalyticsForwarderOptions {
  topicPrefix?: string
  /** Only these events (default: every domain event). */
  filter?: EventFilter
  /** Checkpoint name (default `analytics-forwarder`); give each forwarder of one store its own. */
  name?: string
  /** Stream categories (topics without the prefix) whose personal fields are published. */
  personalTopics?: ReadonlySet<string> | readonly string[]
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
    collections: [],
    async handle(events) {
      // Resolves only when every message is acknowledged; a rejection makes the runner retry the
      // same batch (the checkpoint has not moved), which is where duplicates come from.
      const messages = events.map((e) => toAnalyticsMessage(e, topicPrefix, personal)).filter((m) => m !== null)
      if (messages.length > 0) await publisher.publish(messages)
    },
  }
}
