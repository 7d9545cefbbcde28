// Per-credential request limits with @fastify/rate-limit: one counter per key (API key, OAuth
// grant, IP address) in a fixed window, 429 `rate_limit_exceeded` with `retryAfter` and the
// Retry-After header (the spec's body, through the error handler) and no other headers. The
// store is pluggable: in memory and per process by default (`memoryStore`), a shared one when
// several API processes must count together.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit'
import { createRequire } from 'node:module'
import { DomainError } from '../../domain/errors.ts'
import type { CounterStore } from '../../ports/counterStore.ts'
import type { Application } from '../../commands/application.ts'

/** A counter store as @fastify/rate-limit takes it (a class it instantiates). */
export type RateLimitStore = NonNullable<RateLimitPluginOptions['store']>

// Counters kept in memory: enough keys that live credentials are not evicted by a crowd of others.
const MEMORY_KEYS = 100_000
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as new (continueExceeding: boolean, exponentialBackoff: boolean, cache: number) => object

/** One in-memory store, shared by every registration given the same result (the two MCP listeners count together). */
export function memoryStore(): RateLimitStore {
  const shared = new LocalStore(false, false, MEMORY_KEYS)
  return class {
    constructor() {
      // A constructor may hand back another object: every `new` gets the one shared store.
      return shared
    }
  } as unknown as RateLimitStore
}

/**
 * A store over shared counters (the read-model store when several API processes run), so the
 * replicas count together. Every key is prefixed with `namespace`; a child (a route's or a
 * `counter`'s own counts) adds the `nameSpace` it is created with. Fixed windows, like the
 * in-memory store.
 */
export function sharedStore(counters: CounterStore, namespace: string): RateLimitStore {
  const make = (ns: string) => ({
    incr(key: string, cb: (err: Error | null, res?: { current: number; ttl: number }) => void, timeWindow: number) {
      counters.increment(`${ns}:${key}`, timeWindow).then(
        (r) => cb(null, { current: r.count, ttl: r.ttlMs }),
        (err: Error) => cb(err),
      )
    },
    child(params: { nameSpace?: string }) {
      return make(`${ns}/${params.nameSpace ?? 'child'}`)
    },
  })
  const store = make(namespace)
  return class {
    constructor() {
      return store
    }
  } as unknown as RateLimitStore
}

/** The store for `namespace`: shared when the application has shared counters, else in this process's memory. */
export const storeFor = (app: Application, namespace: string): RateLimitStore => (app.counters ? sharedStore(app.counters, namespace) : memoryStore())

export interface CredentialLimit {
  max: number
  windowSeconds: number
  /** The key a request counts under; it runs after the authentication hook. */
  keyOf: (req: FastifyRequest) => string
  /** The 429's message. */
  message: (retryAfter: number) => string
  store?: RateLimitStore
}

const NO_HEADERS = { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false } as const

/** Counts every route registered after it in this context (a route-level onRequest hook, so after the context's authentication). */
export const limitPerCredential = fp<CredentialLimit>(
  async (app: FastifyInstance, o) => {
    await app.register(rateLimit, {
      global: true,
      hook: 'onRequest',
      max: o.max,
      timeWindow: o.windowSeconds * 1000,
      keyGenerator: o.keyOf,
      cache: MEMORY_KEYS,
      ...(o.store ? { store: o.store } : {}),
      addHeadersOnExceeding: NO_HEADERS,
      // Retry-After comes with the error body (api/http/errorHandling.ts), from the same number.
      addHeaders: { ...NO_HEADERS, 'retry-after': false },
      errorResponseBuilder: (_req, ctx) => {
        const retryAfter = Math.max(1, Math.ceil(ctx.ttl / 1000))
        return new DomainError('rate_limit_exceeded', o.message(retryAfter), { retryAfter })
      },
    })
  },
  { name: 'notes-credential-limit' },
)

/**
 * Limits a handler counts itself, when it decides a request counts (a sign-in attempt, not every
 * page view), on @fastify/rate-limit's stores through its `createRateLimit`: register
 * `countedLimits` in the context, then make each counter with `counter`.
 */
export const countedLimits = fp<{ store?: RateLimitStore }>(
  async (app: FastifyInstance, o) => {
    await app.register(rateLimit, { global: false, cache: MEMORY_KEYS, ...(o.store ? { store: o.store } : {}) })
  },
  { name: 'notes-counted-limits' },
)

export type Counter = (req: FastifyRequest) => Promise<{ ok: true } | { ok: false; retryAfter: number }>

/** One counter with its own counts (a child of the context's store): `max` per `windowSeconds` per `keyOf(req)`. */
export function counter(app: FastifyInstance, o: { name: string; max: number; windowSeconds: number; keyOf: (req: FastifyRequest) => string }): Counter {
  // `nameSpace` names the counts in a shared store (the same in every process).
  const limit = app.createRateLimit({ max: o.max, timeWindow: o.windowSeconds * 1000, keyGenerator: o.keyOf, nameSpace: o.name } as Parameters<typeof app.createRateLimit>[0])
  return async (req) => {
    const r = await limit(req)
    if (r.isAllowed || !r.isExceeded) return { ok: true }
    return { ok: false, retryAfter: Math.max(1, r.ttlInSeconds) }
  }
}
