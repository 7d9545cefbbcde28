// The event-store port. Names follow Emmett (appendToStream, readStream, expected revision) so
// the SQLite and EventStoreDB adapters are interchangeable behind one conformance suite.
import type { DomainEvent } from '../domain/decider.ts'

/** Stream revisions start at 0 for the first event of a stream. */
export type StreamRevision = number

/**
 * Position in the global log. Strictly increasing in commit order, not necessarily contiguous
 * (EventStoreDB uses byte offsets). `START` sits before the first event.
 */
export type GlobalPosition = number
export const START: GlobalPosition = -1

export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | StreamRevision

export interface EventToAppend {
  /**
   * UUID. Re-appending a batch whose ids are all stored already is a no-op that reports where
   * the batch landed (an idempotent retry); a batch mixing stored and new ids is a conflict.
   */
  id: string
  type: string
  data: Record<string, unknown>
  metadata?: Record<string, unknown>
}

export interface RecordedEvent<Type extends string = string, Data = Record<string, unknown>> {
  id: string
  type: Type
  data: Data
  metadata: Record<string, unknown>
  streamName: string
  revision: StreamRevision
  globalPosition: GlobalPosition
  /** ISO 8601, set by the store at commit time. */
  recordedAt: string
}

export interface AppendResult {
  /** Revision of the stream's last event after the append: the next expected revision. */
  nextExpectedRevision: StreamRevision
  /** Global position of the last event written (or of the already stored one on a no-op). */
  lastGlobalPosition: GlobalPosition
}

export interface ReadStreamResult {
  events: RecordedEvent[]
  /** Revision of the last event in the stream, or -1 when the stream does not exist. */
  currentRevision: StreamRevision
  /** False for a stream never written, and for a deleted one (soft or hard: it reads as missing). */
  streamExists: boolean
  /** True when the stream was hard-deleted (tombstoned): appending to it fails with StreamDeletedError. */
  streamDeleted?: boolean
}

export interface EventFilter {
  /** Stream categories: the part of the stream name before the first '-'. */
  categories?: string[]
  eventTypes?: string[]
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Defaults to START. */
  after?: GlobalPosition
  maxCount?: number
  filter?: EventFilter
}

export interface SubscribeOptions {
  after?: GlobalPosition
  filter?: EventFilter
  signal?: AbortSignal
  /** Events fetched per round trip while catching up. */
  batchSize?: number
  /**
   * Called between events, in order, with a position the store has scanned up to: every event
   * yielded before the call lies at or before it, every later one after it. A filtered
   * subscription reports so how far it got through events it skipped, and a consumer that has
   * processed everything yielded so far may store it as its checkpoint. Optional for stores.
   */
  onCheckpoint?: (position: GlobalPosition) => void
}

export interface EventStore {
  appendToStream(
    streamName: string,
    events: EventToAppend[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult>

  readStream(streamName: string, options?: { from?: StreamRevision; maxCount?: number }): Promise<ReadStreamResult>

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>

  /**
   * `readAll` of the log itself: the events as stored, without what the wrappers around it add
   * (no note's content key asked for, no claim-checked payload fetched). For what needs only
   * positions (readiness: is the log there, how far a projection trails it), so a slow key store
   * or blob store cannot make the log look unreachable or a lag unknown. Wrappers pass it to the
   * store they wrap; read it with `readLog`.
   */
  readAllRaw?(options?: ReadAllOptions): Promise<RecordedEvent[]>

  /**
   * Catches up from `after`, then follows live appends, in global order. Ends when `signal`
   * aborts. Consume with `for await` so a slow consumer applies backpressure.
   */
  subscribeToAll(options?: SubscribeOptions): AsyncIterable<RecordedEvent>

  /**
   * Retention for streams whose events are disposable (EventStoreDB stream metadata `$maxCount`
   * and `$maxAge`: older events stop being returned by stream reads and are removed by
   * scavenging). Optional: stores without it keep every event.
   */
  setStreamRetention?(streamName: string, retention: { maxCount?: number; maxAgeSeconds?: number }): Promise<void>

  /**
   * Deletes a stream, as an operator does on EventStoreDB. Soft (default): the stream reads as
   * missing and may be written again, its revisions continuing. Hard (a tombstone): it reads as
   * missing for good and every append fails with StreamDeletedError. Optional: stores without it
   * never delete streams.
   */
  deleteStream?(streamName: string, options?: { hard?: boolean }): Promise<void>

  close(): Promise<void>
}

/** The log's own events (`readAllRaw`), or `readAll` of a store that wraps nothing. */
export const readLog = (store: EventStore, options?: ReadAllOptions): Promise<RecordedEvent[]> => (store.readAllRaw ? store.readAllRaw(options) : store.readAll(options))

export class WrongExpectedRevisionError extends Error {
  override readonly name = 'WrongExpectedRevisionError'
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: StreamRevision,
  ) {
    super(`stream ${streamName}: expected revision ${String(expected)}, actual ${actual}`)
  }
}

/** An append to a hard-deleted (tombstoned) stream: it can never be written again. */
export class StreamDeletedError extends Error {
  override readonly name = 'StreamDeletedError'
  constructor(readonly streamName: string) {
    super(`stream ${streamName} was deleted`)
  }
}

/**
 * The event store did not answer within its deadline (it accepted the connection but hangs, or
 * the network drops replies). Callers treat it as the store being unavailable: a command answers
 * 503, a supervised loop retries.
 */
export class EventStoreTimeoutError extends Error {
  override readonly name: string = 'EventStoreTimeoutError'
  constructor(
    readonly operation: string,
    readonly deadlineMs: number,
  ) {
    super(`the event store did not answer ${operation} within ${deadlineMs} ms`)
  }
}

/**
 * The event store could not be reached (the connection is down, or not back yet): unavailable,
 * like a timeout, and handled the same way by every caller.
 */
export class EventStoreUnreachableError extends EventStoreTimeoutError {
  override readonly name = 'EventStoreUnreachableError'
  constructor(operation: string, deadlineMs: number, reason: string) {
    super(operation, deadlineMs)
    this.message = `the event store could not be reached for ${operation} (${reason})`
  }
}

/**
 * The event store refused the caller: credentials missing, wrong, or without the rights the call
 * needs (on a secured EventStoreDB, reading or subscribing to `$all` needs an admin user).
 */
export class EventStoreAccessDeniedError extends Error {
  override readonly name = 'EventStoreAccessDeniedError'
  constructor(
    readonly operation: string,
    detail: string,
  ) {
    super(`the event store refused ${operation}: ${detail}`)
  }
}

export const categoryOf = (streamName: string): string => {
  const dash = streamName.indexOf('-')
  return dash === -1 ? streamName : streamName.slice(0, dash)
}

export const matchesFilter = (event: Pick<RecordedEvent, 'type' | 'streamName'>, filter?: EventFilter): boolean => {
  if (!filter) return true
  if (filter.categories && !filter.categories.includes(categoryOf(event.streamName))) return false
  if (filter.eventTypes && !filter.eventTypes.includes(event.type)) return false
  return true
}

/** A recorded event as the domain sees it (what deciders fold and projections apply): its type and data. */
export const toDomainEvent = <Event extends DomainEvent>(e: RecordedEvent): Event => ({ type: e.type, data: e.data }) as Event
