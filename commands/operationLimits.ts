// Fixed-window counting per credential, and the per-operation limits (domain/limits.ts) built on it.
// In this process's memory on the embedded default (one API process); in the shared counters
// (`_counters` on MongoDB) when several API processes run, so two replicas grant a limit once.
import { DomainError } from '../domain/errors.ts'
import type { OperationLimit } from '../domain/limits.ts'
import type { CounterStore } from '../ports/counterStore.ts'

export type LimitResult = { ok: true; remaining: number } | { ok: false; retryAfter: number }

export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>()
  private lastSweep = 0

  constructor(
    readonly max: number,
    readonly windowSeconds: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Counts `n` at once (a JSON-RPC batch of n messages): all of them fit in the window, or none is counted. */
  hit(key: string, n = 1): LimitResult {
    const now = this.clock()
    const span = this.windowSeconds * 1000
    this.sweep(now, span)
    let w = this.windows.get(key)
    if (!w || now - w.start >= span) this.windows.set(key, (w = { start: now, count: 0 }))
    if (w.count + n > this.max) return { ok: false, retryAfter: Math.max(1, Math.ceil((w.start + span - now) / 1000)) }
    w.count += n
    return { ok: true, remaining: this.max - w.count }
  }

  /** Forgets finished windows now and then, so idle keys do not pile up. */
  private sweep(now: number, span: number) {
    if (now - this.lastSweep < span) return
    this.lastSweep = now
    for (const [k, w] of this.windows) if (now - w.start >= span) this.windows.delete(k)
  }
}

/** The limiter key of an API key; an OAuth grant counts as `grant:<grantId>` (api/http/authentication.ts). */
export const apiKeyCredential = (keyId: string) => `key:${keyId}`
/** The limiter key of a person signed in to the dashboard (every session of theirs together). */
export const personCredential = (personId: string) => `person:${personId}`

/**
 * The per-operation limits (domain/limits.ts) as one service: one counter per limit and
 * credential, shared by the REST route and the MCP tool of the same operation, so a credential
 * gets the same budget whichever edge it calls through.
 */
export class OperationLimits {
  private readonly buckets = new Map<string, FixedWindowLimiter>()

  /** `counters`: the store the API replicas share (null: count in this process). */
  constructor(
    private readonly clock: () => number = Date.now,
    private readonly counters: CounterStore | null = null,
  ) {}

  /** Counts one call; once the budget is spent, 429 `rate_limit_exceeded` with `retryAfter` (seconds). */
  async hit(limit: OperationLimit, credential: string): Promise<void> {
    const r = this.counters ? await this.hitShared(limit, credential) : this.hitLocal(limit, credential)
    if (!r.ok) {
      throw new DomainError('rate_limit_exceeded', `This operation allows ${limit.max} calls per ${limit.windowSeconds} s per API key (or OAuth grant, or dashboard sign-in); retry in ${r.retryAfter} s.`, {
        retryAfter: r.retryAfter,
      })
    }
  }

  private hitLocal(limit: OperationLimit, credential: string): LimitResult {
    let limiter = this.buckets.get(limit.bucket)
    if (!limiter) this.buckets.set(limit.bucket, (limiter = new FixedWindowLimiter(limit.max, limit.windowSeconds, this.clock)))
    return limiter.hit(credential)
  }

  // A refused call still increments the shared count: harmless, the window's answer stays "no"
  // until it ends, and it keeps this one round trip (no read-then-write race between replicas).
  private async hitShared(limit: OperationLimit, credential: string): Promise<LimitResult> {
    const { count, ttlMs } = await this.counters!.increment(`op:${limit.bucket}:${credential}`, limit.windowSeconds * 1000)
    if (count > limit.max) return { ok: false, retryAfter: Math.max(1, Math.ceil(ttlMs / 1000)) }
    return { ok: true, remaining: limit.max - count }
  }
}
