// The generic command handler: read the stream, fold it, decide, append at the expected
// revision. Commands on the same stream are queued inside this process so they never race
// each other; across processes optimistic concurrency decides and a conflict is retried a
// bounded number of times on fresh state.
import { randomUUID } from 'node:crypto'
import type { Decider, DomainEvent } from '../domain/decider.ts'
import { WrongExpectedRevisionError, toDomainEvent, type EventStore } from '../ports/eventStore.ts'

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
    private readonly options: { maxRetries?: number; cacheSize?: number } = {},
  ) {}

  handle<Command, Event extends DomainEvent, State>(
    streamName: string,
    command: Command,
    decider: Decider<Command, Event, State>,
    opts: HandleOptions = {},
  ): Promise<HandleResult<Event, State>> {
    const previous = this.queues.get(streamName) ?? Promise.resolve()
    const run = previous.then(
      () => this.handleWithRetry(streamName, command, decider, opts),
      () => this.handleWithRetry(streamName, command, decider, opts),
    )
    this.queues.set(streamName, run)
    const cleanup = () => {
      if (this.queues.get(streamName) === run) this.queues.delete(streamName)
    }
    run.then(cleanup, cleanup)
    return run
  }

  /** Current folded state of a stream (for queries that need the decider's view). */
  async load<Event extends DomainEvent, State>(streamName: string, decider: Decider<unknown, Event, State>): Promise<Cached<State>> {
    return this.refresh(streamName, decider)
  }

  private async handleWithRetry<Command, Event extends DomainEvent, State>(
    streamName: string,
    command: Command,
    decider: Decider<Command, Event, State>,
    opts: HandleOptions,
  ): Promise<HandleResult<Event, State>> {
    const maxRetries = this.options.maxRetries ?? 5
    for (let attempt = 0; ; attempt++) {
      const { revision, state } = await this.refresh(streamName, decider)
      const events = decider.decide(command, state)
      if (events.length === 0) return { events, state, revision, position: null }
      try {
        const result = await this.store.appendToStream(
          streamName,
          events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, ...(opts.metadata ? { metadata: opts.metadata } : {}) })),
          { expectedRevision: revision === -1 ? 'no_stream' : revision },
        )
        let next = state
        for (const e of events) next = decider.evolve(next, e)
        this.remember(decider, streamName, { revision: result.nextExpectedRevision, state: next })
        return { events, state: next, revision: result.nextExpectedRevision, position: result.lastGlobalPosition }
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError) || attempt >= maxRetries) throw err
        // Another process wrote first: back off a little (with jitter) and decide again.
        await new Promise((r) => setTimeout(r, Math.random() * 5 * 2 ** attempt))
      }
    }
  }

  private async refresh<Event extends DomainEvent, State>(
    streamName: string,
    decider: Decider<never, Event, State>,
  ): Promise<Cached<State>> {
    const cached = (this.cacheOf(decider).get(streamName) as Cached<State> | undefined) ?? { revision: -1, state: decider.initialState() }
    const read = await this.store.readStream(streamName, { from: cached.revision + 1 })
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

