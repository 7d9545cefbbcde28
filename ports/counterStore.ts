// Request counters several API processes share (rate limits, sign-in throttles, the demo limit),
// so two replicas do not each grant the whole limit. Fixed windows: a count per key per window.

export interface CounterStore {
  /** Adds `by` (default 1) to `key`'s count in the current window of `windowMs`; answers the count after it and the milliseconds left in the window. */
  increment(key: string, windowMs: number, by?: number): Promise<{ count: number; ttlMs: number }>
}
