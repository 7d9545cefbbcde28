// The generic command handler: read the stream, fold it, decide, append at the expected
// revision. Commands on the same stream are queued inside this process so they never race
// each other; across processes optimistic concurrency decides and a conflict is retried on
// fresh state with a jittered backoff until a deadline (then 503 service_unavailable with
// Retry-After: a conflict is never a 500).
//
// Event ids are derived from the command when it carries an idempotency key (the
// Idempotency-Key header, else the request id): the same command retried (by the client after
// a timeout, or by this loop) proposes the same ids, and the store turns a re-append of stored
// ids into a no-op, so it applies once.
import { createHash, randomUUID } from 'node:crypto'
import type { Decider, DomainEvent } from '../domain/decider.ts'
import { DomainError } from '../domain/errors.ts'
import { EventStoreTimeoutError, StreamDeletedError, WrongExpectedRevisionError, toDomainEvent, type EventStore } from '../ports/eventStore.ts'

export interface HandleResult<Event extends DomainEvent, State> {
  events: Event[]
  state: State
  /** Revision of the stream's last event after the command (-1: the stream still does not exist). */
  revision: number
  /** Global position of the last appended event, or null when the command appended nothing. */
  position: number | null
}

export interface HandleOptions {
  /** Stored with every appended event (request id, actor, ...). */
  metadata?: Record<string, unknown>
  /** Derives the event ids from the command; defaults to `metadata.requestId` when it is a string. */
  idempotencyKey?: string
  /**
   * The stream cannot exist yet (its id was just drawn at random): the first attempt decides on
   * the initial state without reading the stream, which saves a round trip to the store. Should
   * the stream exist after all, the append (expected: no stream) conflicts and the retry reads it.
   */
  newStream?: boolean
}

/** How long a command keeps retrying optimistic-concurrency conflicts before answering 503. */
export const CONFLICT_DEADLINE_MS = 10_000
/** The Retry-After (seconds) of the 503 when the deadline passes. */
export const CONFLICT_RETRY_AFTER_SECONDS = 1

/** The command without its clock, in a canonical form: a retried command gives the same text. */
const canonical = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(',')}]`
    : v && typeof v === 'object'
      ? `{${Object.keys(v)
          .filter((k) => k !== 'now')
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : String(JSON.stringify(v))

/** A UUID (version 8, name-based on SHA-256) for the `index`-th event of a command. */
export function derivedEventId(streamName: string, key: string, command: unknown, index: number): string {
  const h = createHash('sha256').update(`${streamName}\0${key}\0${canonical(command)}\0${index}`).digest()
  h[6] = (h[6]! & 0x0f) | 0x80
  h[8] = (h[8]! & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`
}

/** A store that misses its deadline is unavailable for now: 503 with Retry-After, never a 500 or a hang. */
function unavailable(err: unknown): never {
  if (err instanceof EventStoreTimeoutError) {
    throw new DomainError('service_unavailable', 'The event store is not answering; retry shortly.', { retryAfter: CONFLICT_RETRY_AFTER_SECONDS })
  }
  throw err
}

interface Cached<State> {
  revision: number
  state: State
}

export class CommandHandler {
  private readonly queues = new Map<string, Promise<unknown>>()
  // Folded state per stream and decider, so a command reads only the events appended since the
  // last one. Several deciders may read one stream (the note's lifecycle, its transcript side),
  // each folding it into its own state, so the cache is kept per decider.
  private readonly caches = new WeakMap<object, Map<string, Cached<unknown>>>()

  constructor(
    private readonly store: EventStore,
    private readonly options: { /** Conflict retries at most (default: until the deadline). */ maxRetries?: number; conflictDeadlineMs?: number; cacheSize?: number } = {},
  ) {}

  handle<Command, Event extends DomainEvent, State>(
    streamName: string,
    command: Command,
    decider: Decider<Command, Event, State>,
    opts: HandleOptions = {},
  ): Promise<HandleResult<Event, State>> {
    const previous = this.queues.get(streamName) ?? Promise.resolve()
    const attempt = () => this.handleWithRetry(streamName, command, decider, opts).catch(unavailable)
    const run = previous.then(attempt, attempt)
    this.queues.set(streamName, run)
    const cleanup = () => {
      if (this.queues.get(streamName) === run) this.queues.delete(streamName)
    }
    run.then(cleanup, cleanup)
    return run
  }

  /** Current folded state of a stream (for queries that need the decider's view). */
  async load<Event extends DomainEvent, State>(streamName: string, decider: Decider<unknown, Event, State>): Promise<Cached<State>> {
    return this.refresh(streamName, decider).catch(unavailable)
  }

  private async handleWithRetry<Command, Event extends DomainEvent, State>(
    streamName: string,
    command: Command,
    decider: Decider<Command, Event, State>,
    opts: HandleOptions,
  ): Promise<HandleResult<Event, State>> {
    const maxRetries = this.options.maxRetries ?? Infinity
    const deadline = Date.now() + (this.options.conflictDeadlineMs ?? CONFLICT_DEADLINE_MS)
    const key = opts.idempotencyKey ?? (typeof opts.metadata?.requestId === 'string' ? opts.metadata.requestId : undefined)
    for (let attempt = 0; ; attempt++) {
      const { revision, state } =
        opts.newStream && attempt === 0 && !this.cacheOf(decider).has(streamName) ? { revision: -1, state: decider.initialState() } : await this.refresh(streamName, decider)
      const events = decider.decide(command, state)
      if (events.length === 0) return { events, state, revision, position: null }
      try {
        const result = await this.store.appendToStream(
          streamName,
          events.map((e, i) => ({
            id: key ? derivedEventId(streamName, key, command, i) : randomUUID(),
            type: e.type,
            data: e.data,
            ...(opts.metadata ? { metadata: opts.metadata } : {}),
          })),
          { expectedRevision: revision === -1 ? 'no_stream' : revision },
        )
        if (result.nextExpectedRevision !== revision + events.length) {
          // The store already had these ids (a retried command): nothing new was written, so
          // read back what is there rather than fold the proposed events twice.
          this.cacheOf(decider).delete(streamName)
          const stored = await this.refresh(streamName, decider)
          return { events: [], state: stored.state, revision: stored.revision, position: result.lastGlobalPosition }
        }
        let next = state
        for (const e of events) next = decider.evolve(next, e)
        this.remember(decider, streamName, { revision: result.nextExpectedRevision, state: next })
        return { events, state: next, revision: result.nextExpectedRevision, position: result.lastGlobalPosition }
      } catch (err) {
        // A stream an operator hard-deleted is gone for good: what it held is not found, never a 500.
        if (err instanceof StreamDeletedError) {
          this.cacheOf(decider).delete(streamName)
          throw new DomainError('not_found', 'This resource was deleted.')
        }
        if (!(err instanceof WrongExpectedRevisionError)) throw err
        // Another process wrote first: back off (full jitter, doubling up to 250 ms) and decide again.
        const wait = Math.random() * Math.min(250, 5 * 2 ** attempt)
        if (attempt >= maxRetries || Date.now() + wait > deadline) {
          throw new DomainError('service_unavailable', `Stream ${streamName} is busy with concurrent writes; retry shortly.`, { retryAfter: CONFLICT_RETRY_AFTER_SECONDS })
        }
        await new Promise((r) => setTimeout(r, wait))
      }
    }
  }

  private async refresh<Event extends DomainEvent, State>(
    streamName: string,
    decider: Decider<never, Event, State>,
  ): Promise<Cached<State>> {
    const cached = (this.cacheOf(decider).get(streamName) as Cached<State> | undefined) ?? { revision: -1, state: decider.initialState() }
    const read = await this.store.readStream(streamName, { from: cached.revision + 1 })
    if (!read.streamExists && cached.revision >= 0) {
      // Deleted since it was cached (an operator deleted the stream): it reads as missing now.
      this.cacheOf(decider).delete(streamName)
      return { revision: -1, state: decider.initialState() }
    }
    if (read.events.length === 0) return cached
    let state = cached.state
    for (const e of read.events) state = decider.evolve(state, toDomainEvent<Event>(e))
    const fresh = { revision: read.events[read.events.length - 1]!.revision, state }
    this.remember(decider, streamName, fresh)
    return fresh
  }

  private cacheOf(decider: object): Map<string, Cached<unknown>> {
    let cache = this.caches.get(decider)
    if (!cache) this.caches.set(decider, (cache = new Map()))
    return cache
  }

  private remember(decider: object, streamName: string, entry: Cached<unknown>) {
    const limit = this.options.cacheSize ?? 10_000
    const cache = this.cacheOf(decider)
    cache.delete(streamName)
    cache.set(streamName, entry)
    if (cache.size > limit) cache.delete(cache.keys().next().value!)
  }
}

