// "Last used" of API keys without an event per request: each process records a key's use at
// most once per interval (API_KEY_USAGE_INTERVAL_SECONDS, default 300 s) as `ApiKeyUsed` on the
// key's usage stream, and the api-keys projection keeps the latest time. With P API processes a
// busy key costs at most P events per interval, whatever its request rate; the list shows when
// a key was last used to within that interval. Recording never delays or fails a request.
import { randomUUID } from 'node:crypto'
import { apiKeyUsageStream, type ApiKeyUsed } from '../domain/accounts/apiKey.ts'
import type { EventStore } from '../ports/eventStore.ts'

const REMEMBERED_KEYS = 50_000
/**
 * Only the latest use matters (the projection keeps the newest time): where the store supports
 * it, a usage stream keeps its last few events for 30 days, and older ones are scavenged.
 */
export const USAGE_RETENTION = { maxCount: 10, maxAgeSeconds: 30 * 24 * 3600 }

export class ApiKeyUsage {
  private readonly recorded = new Map<string, number>()

  constructor(
    private readonly events: EventStore,
    private readonly intervalMs: number,
    private readonly clock: () => Date = () => new Date(),
    private readonly log: (message: string) => void = (m) => console.error(m),
  ) {}

  /** Called on every successful authentication; appends only when the interval has passed. */
  seen(keyId: string, accountId: string): void {
    const now = this.clock()
    const last = this.recorded.get(keyId)
    if (last !== undefined && now.getTime() - last < this.intervalMs) return
    // Once per key and process (and again after the key falls out of the memory): cheap and idempotent.
    if (last === undefined) this.events.setStreamRetention?.(apiKeyUsageStream.of(keyId), USAGE_RETENTION).catch((err: unknown) => this.log(`[api-key-usage] could not set the retention of ${keyId}: ${(err as Error).message}`))
    this.recorded.delete(keyId)
    this.recorded.set(keyId, now.getTime())
    if (this.recorded.size > REMEMBERED_KEYS) this.recorded.delete(this.recorded.keys().next().value!)
    const event: ApiKeyUsed = { type: 'ApiKeyUsed', data: { keyId, accountId, at: now.toISOString() } }
    this.events.appendToStream(apiKeyUsageStream.of(keyId), [{ id: randomUUID(), ...event }], { expectedRevision: 'any' }).catch((err: unknown) => {
      // Try again on the next request rather than wait a whole interval.
      this.recorded.delete(keyId)
      this.log(`[api-key-usage] could not record the use of ${keyId}: ${(err as Error).message}`)
    })
  }
}
