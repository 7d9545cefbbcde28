// Fixed-window counting per credential, and the per-operation limits (domain/limits.ts) built on it.
// In memory and per process:
// with several API processes each enforces the limit on its own share (README, "Rate limits").
import { DomainError } from '../domain/errors.ts'
import type { OperationLimit } from '../domain/limits.ts'

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

/**
 * The per-operation limits (domain/limits.ts) as one service: one counter per limit and
 * credential, shared by the REST route and the MCP tool of the same operation, so a credential
 * gets the same budget whichever edge it calls through.
 */
export class OperationLimits {
  private readonly buckets = new Map<string, FixedWindowLimiter>()

  constructor(private readonly clock: () => number = Date.now) {}

  /** Counts one call; once the budget is spent, 429 `rate_limit_exceeded` with `retryAfter` (seconds). */
  hit(limit: OperationLimit, credential: string): void {
    let limiter = this.buckets.get(limit.bucket)
    if (!limiter) this.buckets.set(limit.bucket, (limiter = new FixedWindowLimiter(limit.max, limit.windowSeconds, this.clock)))
    const r = limiter.hit(credential)
    if (!r.ok) {
      throw new DomainError('rate_limit_exceeded', `This operation allows ${limit.max} calls per ${limit.windowSeconds} s per API key (or OAuth grant); retry in ${r.retryAfter} s.`, {
        retryAfter: r.retryAfter,
      })
    }
  }
}
