// Fixed-window request counting per key (API key, IP address, ...). In memory and per process:
// with several API processes each enforces the limit on its own share (README, "Rate limits").

export type LimitResult = { ok: true; remaining: number } | { ok: false; retryAfter: number }

export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>()
  private lastSweep = 0

  constructor(
    readonly max: number,
    readonly windowSeconds: number,
    private readonly clock: () => number = Date.now,
  ) {}

  hit(key: string): LimitResult {
    const now = this.clock()
    const span = this.windowSeconds * 1000
    this.sweep(now, span)
    let w = this.windows.get(key)
    if (!w || now - w.start >= span) this.windows.set(key, (w = { start: now, count: 0 }))
    if (w.count >= this.max) return { ok: false, retryAfter: Math.max(1, Math.ceil((w.start + span - now) / 1000)) }
    w.count++
    return { ok: true, remaining: this.max - w.count }
  }

  /** Forgets finished windows now and then, so idle keys do not pile up. */
  private sweep(now: number, span: number) {
    if (now - this.lastSweep < span) return
    this.lastSweep = now
    for (const [k, w] of this.windows) if (now - w.start >= span) this.windows.delete(k)
  }
}
