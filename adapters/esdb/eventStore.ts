// The event-store port on EventStoreDB, through `@eventstore/db-client` (the only file that
// imports it). Positions in $all are commit positions; category and event-type filters are
// pushed to the server where the client allows it and always re-checked here, so results are
// exact whatever the server filters.
import { once } from 'node:events'
import {
  AccessDeniedError,
  BACKWARDS,
  CancelledError,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  NotLeaderError,
  START as ESDB_START,
  StreamDeletedError as EsdbStreamDeletedError,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type Filter,
  type Position,
  type ReadPosition,
  type ResolvedEvent,
  type StreamingRead,
} from '@eventstore/db-client'
import {
  EventStoreAccessDeniedError,
  EventStoreTimeoutError,
  EventStoreUnreachableError,
  START,
  StreamDeletedError,
  WrongExpectedRevisionError,
  matchesFilter,
  type AppendResult,
  type EventFilter,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type GlobalPosition,
  type ReadAllOptions,
  type ReadStreamResult,
  type RecordedEvent,
  type StreamRevision,
  type SubscribeOptions,
} from '../../ports/eventStore.ts'

type EsdbEvent = ResolvedEvent | AllStreamResolvedEvent

/** What EventStoreDB reports as the position of events it cannot place in $all (ulong.MaxValue). */
const UNKNOWN_POSITION = 2n ** 64n - 1n

/** Deadline of every call when the connection string sets no `defaultDeadline` (the client's default too). */
export const DEFAULT_DEADLINE_MS = 10_000

/**
 * Every call has a deadline: `defaultDeadline` (milliseconds) of the connection string, else
 * 10 s. A unary call (append, delete, metadata) must answer within it; a read must deliver each
 * next event within it (so a long read is never cut while it makes progress); a subscription
 * must be confirmed within it (after that a live subscription may stay quiet for good). A call
 * that misses it fails with EventStoreTimeoutError, and the client is replaced: a server that
 * accepted the connection and then hung can leave the client's channel (and its cached server
 * features) waiting for ever, so later calls start on a fresh connection.
 */
export function openEsdbEventStore(connectionString: string): EventStore {
  const conn = new Connection(connectionString, deadlineOf(connectionString))
  // Ends live subscriptions on close: the client's dispose() alone would leave them hanging.
  const closing = new AbortController()
  return {
    appendToStream: (streamName, events, options) => appendToStream(conn, streamName, events, options?.expectedRevision ?? 'any'),
    readStream: (streamName, options) => readStream(conn, streamName, options),
    readAll: (options) => readAll(conn, options),
    subscribeToAll: (options = {}) =>
      subscribeToAll(conn, { ...options, signal: options.signal ? AbortSignal.any([options.signal, closing.signal]) : closing.signal }),
    async setStreamRetention(streamName, { maxCount, maxAgeSeconds }) {
      // Written to the metadata stream `$$<stream>` as a `$metadata` event (client.setStreamMetadata).
      const metadata = { ...(maxCount !== undefined ? { maxCount } : {}), ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}) }
      await conn.call(`setStreamMetadata(${streamName})`, (client, deadline) => client.setStreamMetadata(streamName, metadata, { deadline }))
    },
    async deleteStream(streamName, { hard = false } = {}) {
      try {
        await conn.call(`${hard ? 'tombstoneStream' : 'deleteStream'}(${streamName})`, (client, deadline) =>
          hard ? client.tombstoneStream(streamName, { deadline }) : client.deleteStream(streamName, { deadline }),
        )
      } catch (error) {
        // Deleting a deleted stream is done already.
        if (!(error instanceof EsdbStreamDeletedError)) throw error
      }
    },
    async close() {
      closing.abort()
      await conn.dispose()
    },
  }
}

/** A refusal that says what to change: on a secured server the connection string needs a user, and `$all` an admin. */
function accessDenied(operation: string, error: AccessDeniedError, credentials: boolean): EventStoreAccessDeniedError {
  const why = error.message.replace(/^\d+ [A-Z_]+: /, '')
  const hint = /UNAUTHENTICATED/.test(error.message)
    ? 'the user or password in the connection string is wrong'
    : credentials
      ? 'the user in the connection string lacks the rights (reading or subscribing to $all needs an admin user on a secured server)'
      : 'the server is secured and the connection string has no credentials (ESDB_URL=esdb://user:password@host:2113?tls=true)'
  return new EventStoreAccessDeniedError(operation, `${why}; ${hint}`)
}

/** gRPC status codes of a call the client did not deliver: the connection dropped, or is not (yet) up. */
const GRPC_CANCELLED = 1
const GRPC_UNAVAILABLE = 14

const connectionLost = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code
  return error instanceof UnavailableError || error instanceof CancelledError || code === GRPC_CANCELLED || code === GRPC_UNAVAILABLE
}

/** A lost connection as the port's unavailability; any other error as it is. */
const unreachable = (operation: string, error: unknown, deadlineMs: number): unknown =>
  connectionLost(error) ? new EventStoreUnreachableError(operation, deadlineMs, error instanceof Error ? error.message : String(error)) : error

/** Replaced clients kept open for what still runs on them. */
const RETIRED_CLIENTS = 3

const deadlineOf = (connectionString: string): number => {
  const match = /[?&]defaultDeadline=(\d+)/i.exec(connectionString)
  return match ? Number(match[1]) : DEFAULT_DEADLINE_MS
}

/** The current client, each call under its deadline, and a fresh client after a call timed out. */
class Connection {
  private current: EventStoreDBClient
  /** Whether the connection string carries a user (`esdb://user:password@host`), for the hint of a refusal. */
  readonly credentials: boolean
  constructor(
    private readonly connectionString: string,
    readonly deadlineMs: number,
  ) {
    this.current = EventStoreDBClient.connectionString(connectionString)
    this.credentials = /^esdb(\+discover)?:\/\/[^/@?]+@/.test(connectionString)
  }

  get client(): EventStoreDBClient {
    return this.current
  }

  /** Clients replaced after a timeout, kept open for the calls and subscriptions still on them. */
  private readonly retired: EventStoreDBClient[] = []

  /**
   * After a timeout on `stale`: later calls open a new connection. The old one is not closed at
   * once: one slow call must not cut every live subscription on it (their loops would all
   * resubscribe); the calls on it end by their own deadlines, and it is closed a few
   * replacements later, or on close.
   */
  replace(stale: EventStoreDBClient): void {
    if (this.current !== stale) return
    this.current = EventStoreDBClient.connectionString(this.connectionString)
    this.retired.push(stale)
    if (this.retired.length > RETIRED_CLIENTS) void this.retired.shift()!.dispose().catch(() => {})
  }

  /** A unary call: answered within the deadline, or EventStoreTimeoutError. */
  async call<T>(operation: string, run: (client: EventStoreDBClient, deadline: number) => Promise<T>): Promise<T> {
    const started = Date.now()
    for (let attempt = 0; ; attempt++) {
      const client = this.current
      try {
        return await this.within(operation, run(client, this.deadlineMs))
      } catch (error) {
        if (error instanceof EventStoreTimeoutError) this.replace(client)
        if (await this.leaderMoved(error, attempt)) continue
        if (!(await this.reconnecting(operation, error, attempt, started))) throw error
      }
    }
  }

  /** Each next event of a read within the deadline; the read is cancelled when it times out. */
  async *read<E>(operation: string, open: (client: EventStoreDBClient) => StreamingRead<E>): AsyncGenerator<E> {
    for (let attempt = 0; ; attempt++) {
      const client = this.current
      const read = open(client)
      const events = (read as AsyncIterable<E>)[Symbol.asyncIterator]()
      let yielded = false
      try {
        for (;;) {
          const next = await this.within(operation, events.next())
          if (next.done) return
          yielded = true
          yield next.value
        }
      } catch (error) {
        if (error instanceof EventStoreTimeoutError) this.replace(client)
        // A read that has delivered events cannot start over without repeating them.
        if (yielded || !(await this.leaderMoved(error, attempt))) throw unreachable(operation, error, this.deadlineMs)
      } finally {
        // Stops the server from streaming the rest after an early end, a failure or a timeout.
        await read.cancel().catch(() => {})
      }
    }
  }

  /**
   * NotLeader: the node answered that another one leads (an election moved the leader). The
   * client then points its next call at the leader the error names, so the call is made once
   * more there (appends carry their event ids, so a repeated one applies once).
   */
  private async leaderMoved(error: unknown, attempt: number): Promise<boolean> {
    if (!(error instanceof NotLeaderError) || attempt > 0) return false
    // The client switches its channel in an error handler it does not wait for: let it run.
    await new Promise((resolve) => setImmediate(resolve))
    return true
  }

  /**
   * A unary call whose connection dropped (the call in flight is cancelled) or is not back yet
   * (UNAVAILABLE, answered at once while the client reconnects, even after the store is up
   * again) is made again after a short pause until the deadline, then fails as
   * EventStoreUnreachableError (503 with Retry-After at the edge), never as a raw gRPC error (a
   * 500). Safe for appends: they carry their event ids, so one that did land applies once.
   * Reads are not made again: they fail at once the same way, so a supervised loop notices
   * the outage and backs off itself.
   */
  private async reconnecting(operation: string, error: unknown, attempt: number, started: number): Promise<boolean> {
    if (!connectionLost(error)) return false
    const left = this.deadlineMs - (Date.now() - started)
    if (left <= 0) throw unreachable(operation, error, this.deadlineMs)
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, 250, 25 * 2 ** attempt)))
    return true
  }

  /** `promise`, or EventStoreTimeoutError once the deadline passes (the client's own deadline error maps to it too). */
  async within<T>(operation: string, promise: Promise<T>): Promise<T> {
    // The loser of the race may still fail later: nobody waits for it any more.
    promise.catch(() => {})
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EventStoreTimeoutError(operation, this.deadlineMs)), this.deadlineMs)
    })
    try {
      return await Promise.race([promise, timeout])
    } catch (error) {
      if (error instanceof DeadlineExceededError) throw new EventStoreTimeoutError(operation, this.deadlineMs)
      if (error instanceof AccessDeniedError) throw accessDenied(operation, error, this.credentials)
      throw error
    } finally {
      clearTimeout(timer)
    }
  }

  async dispose(): Promise<void> {
    await Promise.all([this.current, ...this.retired.splice(0)].map((client) => client.dispose()))
  }
}

// ---------------------------------------------------------------------------------------------
// Appends
// ---------------------------------------------------------------------------------------------

async function appendToStream(
  conn: Connection,
  streamName: string,
  events: EventToAppend[],
  expected: ExpectedRevision,
): Promise<AppendResult> {
  if (events.length === 0) return appendNothing(conn, streamName, expected)
  try {
    const result = await conn.call(`appendToStream(${streamName})`, (client, deadline) =>
      client.appendToStream(streamName, events.map(toEventData), { expectedRevision: toEsdbExpected(expected), deadline }),
    )
    const nextExpectedRevision = Number(result.nextExpectedRevision)
    // Servers before 22.x answer an idempotent retry without a position: look the event up.
    const lastGlobalPosition = result.position
      ? Number(result.position.commit)
      : await positionOfRevision(conn, streamName, nextExpectedRevision)
    return { nextExpectedRevision, lastGlobalPosition }
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) {
      throw new WrongExpectedRevisionError(streamName, expected, toRevision(error.actualVersion))
    }
    if (error instanceof EsdbStreamDeletedError) throw new StreamDeletedError(streamName)
    throw error
  }
}

/** An empty append writes nothing but still honours the expected revision. */
async function appendNothing(conn: Connection, streamName: string, expected: ExpectedRevision): Promise<AppendResult> {
  const last = await lastEvent(conn, streamName)
  const current = last ? last.revision : -1
  if (!isSatisfied(expected, current)) throw new WrongExpectedRevisionError(streamName, expected, current)
  return { nextExpectedRevision: current, lastGlobalPosition: last ? last.globalPosition : START }
}

function isSatisfied(expected: ExpectedRevision, current: StreamRevision): boolean {
  switch (expected) {
    case 'any':
      return true
    case 'no_stream':
      return current === -1
    case 'stream_exists':
      return current >= 0
    default:
      return expected === current
  }
}

const toEventData = (event: EventToAppend) =>
  jsonEvent({ id: event.id, type: event.type, data: event.data, ...(event.metadata ? { metadata: event.metadata } : {}) })

const toEsdbExpected = (expected: ExpectedRevision): AppendExpectedRevision =>
  typeof expected === 'number' ? BigInt(expected) : expected

/** The client reports a missing stream as 'no_stream'; the port as -1. */
const toRevision = (version: bigint | string | undefined): StreamRevision => (typeof version === 'bigint' ? Number(version) : -1)

async function positionOfRevision(conn: Connection, streamName: string, revision: StreamRevision): Promise<GlobalPosition> {
  const [event] = await collect(conn.read(`readStream(${streamName})`, (client) => client.readStream(streamName, { fromRevision: BigInt(revision), maxCount: 1 })))
  if (!event) throw new Error(`stream ${streamName}: revision ${revision} was reported written but cannot be read`)
  return toRecordedEvent(event).globalPosition
}

// ---------------------------------------------------------------------------------------------
// Stream reads
// ---------------------------------------------------------------------------------------------

async function readStream(
  conn: Connection,
  streamName: string,
  { from = 0, maxCount }: { from?: StreamRevision; maxCount?: number } = {},
): Promise<ReadStreamResult> {
  let events: RecordedEvent[]
  try {
    const read =
      maxCount === 0
        ? []
        : await collect(conn.read(`readStream(${streamName})`, (client) => client.readStream(streamName, { fromRevision: BigInt(from), ...(maxCount ? { maxCount } : {}) })))
    events = read.map(toRecordedEvent)
  } catch (error) {
    // A soft-deleted stream answers StreamNotFound, a tombstoned one StreamDeleted: both read as missing.
    if (error instanceof StreamNotFoundError) return { events: [], currentRevision: -1, streamExists: false }
    if (error instanceof EsdbStreamDeletedError) return { events: [], currentRevision: -1, streamExists: false, streamDeleted: true }
    throw error
  }
  // When the read reached the end of the stream its last event is the current revision: taking
  // it from a second read could pair these events with a revision appended in between.
  const reachedEnd = events.length > 0 && (maxCount === undefined || events.length < maxCount)
  const currentRevision = reachedEnd ? events.at(-1)!.revision : ((await lastEvent(conn, streamName))?.revision ?? -1)
  return { events, currentRevision, streamExists: currentRevision >= 0 }
}

async function lastEvent(conn: Connection, streamName: string): Promise<RecordedEvent | undefined> {
  try {
    const [last] = await collect(conn.read(`readStream(${streamName})`, (client) => client.readStream(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })))
    return last && toRecordedEvent(last)
  } catch (error) {
    if (error instanceof StreamNotFoundError || error instanceof EsdbStreamDeletedError) return undefined
    throw error
  }
}

async function collect<E>(read: AsyncIterable<E>): Promise<E[]> {
  const out: E[] = []
  for await (const event of read) out.push(event)
  return out
}

// ---------------------------------------------------------------------------------------------
// $all: reads and subscriptions
// ---------------------------------------------------------------------------------------------

async function readAll(conn: Connection, { after = START, maxCount = Infinity, filter }: ReadAllOptions = {}): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = []
  if (maxCount <= 0) return out
  // This client version reads $all without server-side filters: the filter applies here. An
  // early break cancels the read (Connection.read), so the server stops streaming the rest.
  for await (const resolved of conn.read('readAll', (client) => client.readAll({ fromPosition: toReadPosition(after) }))) {
    const event = wanted(resolved, after, filter)
    if (!event) continue
    out.push(event)
    if (out.length >= maxCount) break
  }
  return out
}

async function* subscribeToAll(
  conn: Connection,
  { after = START, filter, signal, batchSize, onCheckpoint }: SubscribeOptions,
): AsyncGenerator<RecordedEvent> {
  if (signal?.aborted) return
  const client = conn.client
  // Checkpoints (checkpointReached) say how far the server has scanned, matching or not. The
  // client calls back when the checkpoint arrives, while events received before it may still
  // wait in the subscription's buffer: reporting it then would let a consumer store a position
  // past events it has not processed. So each checkpoint is held until every event the client
  // passed on before it has been taken from the buffer (counted at the client's push, which
  // follows the order of the server's messages), and reported before the next event.
  const checkpoints: { position: GlobalPosition; after: number }[] = []
  let pushed = 0
  let taken = 0
  let arrived: (() => void) | undefined
  const checkpointReached = (_: unknown, position: Position) => {
    checkpoints.push({ position: Number(position.commit), after: pushed })
    arrived?.()
  }
  const subscription = client.subscribeToAll(
    { fromPosition: toReadPosition(after), filter: serverFilter(filter, onCheckpoint ? checkpointReached : undefined) },
    batchSize ? { highWaterMark: batchSize } : {},
  )
  if (onCheckpoint) {
    const push = subscription.push.bind(subscription)
    subscription.push = (chunk: unknown, encoding?: BufferEncoding) => {
      if (chunk !== null) pushed++
      return push(chunk, encoding)
    }
  }
  let reported = after
  const report = () => {
    let reached: GlobalPosition | undefined
    while (checkpoints.length > 0 && checkpoints[0]!.after <= taken) reached = checkpoints.shift()!.position
    if (reached !== undefined && reached > reported) onCheckpoint!((reported = reached))
  }
  const CHECKPOINT = Symbol('checkpoint')
  const checkpointArrives = () => new Promise<typeof CHECKPOINT>((resolve) => (arrived = () => resolve(CHECKPOINT)))

  // Destroying the readable side wakes the pending read below; the gRPC call is cancelled in finally.
  const stop = () => subscription.destroy()
  signal?.addEventListener('abort', stop, { once: true })
  const items = (subscription as AsyncIterable<AllStreamResolvedEvent>)[Symbol.asyncIterator]()
  let pending: Promise<IteratorResult<AllStreamResolvedEvent>> | undefined
  try {
    // The server confirms a subscription first: one it never confirms is a store that hangs.
    try {
      await conn.within('subscribeToAll', once(subscription, 'confirmation', signal ? { signal } : {}))
    } catch (error) {
      if (error instanceof EventStoreTimeoutError) conn.replace(client)
      throw error
    }
    for (;;) {
      if (onCheckpoint) report()
      pending ??= items.next()
      const next = onCheckpoint ? await Promise.race([pending, checkpointArrives()]) : await pending
      if (next === CHECKPOINT) continue
      pending = undefined
      if (signal?.aborted || next.done) return
      if (onCheckpoint) report()
      taken++
      const event = wanted(next.value, after, filter)
      if (event) yield event
    }
  } catch (error) {
    // The iteration fails with a premature close when aborted: that is the normal end.
    if (!signal?.aborted) throw error
  } finally {
    pending?.catch(() => {})
    signal?.removeEventListener('abort', stop)
    await subscription.unsubscribe()
  }
}

/** $all reads start at the given position (inclusive), subscriptions after it. */
const toReadPosition = (after: GlobalPosition): ReadPosition =>
  after === START ? ESDB_START : ({ commit: BigInt(after), prepare: BigInt(after) } satisfies Position)

/** The port's event if it is a user event after `after` that passes the filter. */
function wanted(resolved: EsdbEvent, after: GlobalPosition, filter: EventFilter | undefined): RecordedEvent | undefined {
  const event = resolved.event
  if (!event || isSystemEvent(event.streamId, event.type)) return undefined
  if (!matchesFilter({ streamName: event.streamId, type: event.type }, filter)) return undefined
  const recorded = toRecordedEvent(resolved)
  return recorded.globalPosition > after ? recorded : undefined
}

const isSystemEvent = (streamName: string, type: string): boolean => streamName.startsWith('$') || type.startsWith('$')

/**
 * Narrows what the server sends: by stream name when categories are given (the more selective
 * filter), else by event type; without a filter, at least system events stay on the server.
 */
function serverFilter(filter: EventFilter | undefined, checkpointReached?: (subscription: unknown, position: Position) => void): Filter {
  const checkpoints = checkpointReached ? { checkpointReached } : {}
  if (filter?.categories) return streamNameFilter({ regex: `^${anyOf(filter.categories)}(?:-|$)`, ...checkpoints })
  if (filter?.eventTypes) return eventTypeFilter({ regex: `^${anyOf(filter.eventTypes)}$`, ...checkpoints })
  return excludeSystemEvents(checkpoints)
}

/** A regex alternation of literal values; an empty list matches nothing. */
const anyOf = (values: string[]): string =>
  values.length === 0 ? '(?!)' : `(?:${values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`

// ---------------------------------------------------------------------------------------------
// Conversion
// ---------------------------------------------------------------------------------------------

function toRecordedEvent(resolved: EsdbEvent): RecordedEvent {
  const event = resolved.event
  if (!event) throw new Error('EventStoreDB returned a link without its event')
  return {
    id: event.id,
    type: event.type,
    data: asObject(event.data) ?? {},
    metadata: asObject(event.metadata) ?? {},
    streamName: event.streamId,
    revision: Number(event.revision),
    globalPosition: globalPositionOf(resolved),
    recordedAt: event.created.toISOString(),
  }
}

function globalPositionOf(resolved: EsdbEvent): GlobalPosition {
  const commit = resolved.commitPosition ?? resolved.event?.position?.commit
  if (commit === undefined || commit === UNKNOWN_POSITION) {
    // Stream reads carry $all positions from EventStoreDB 22.10 on.
    throw new Error(`EventStoreDB did not report the $all position of event ${resolved.event?.id} (needs EventStoreDB 22.10 or later)`)
  }
  return Number(commit)
}

/**
 * The port carries JSON objects. Payloads written by other tools as binary, or as JSON arrays or
 * scalars, are kept whole under `value` rather than dropped; an absent payload is undefined.
 */
function asObject(payload: unknown): Record<string, unknown> | undefined {
  if (payload === undefined) return undefined
  const isPlainObject = typeof payload === 'object' && payload !== null && !Array.isArray(payload) && !(payload instanceof Uint8Array)
  return isPlainObject ? (payload as Record<string, unknown>) : { value: payload }
}
