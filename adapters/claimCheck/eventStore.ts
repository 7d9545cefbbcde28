// Claim check (issue 13, finding 2): events whose payload is large (a transcript with word
// timings) keep their data in the blob store and carry only its SHA-256 and key. EventStoreDB
// refuses an append over its --max-append-size (1 MiB by default, the whole batch), so a batch
// is kept under CLAIM_CHECK_THRESHOLD_BYTES by moving its largest payloads out, largest first.
// Reads (readStream, readAll, subscribeToAll) put the payload back, checking its hash, so
// deciders, projections, replays and rebuilds see the event as it was decided.
// Blobs are content-addressed (claims/<sha256>.json): re-appending the same payload writes
// nothing new, and a retried append finds its blob already there.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { BlobStore } from '../../ports/blobStore.ts'
import { readLog, type EventStore, type EventToAppend, type RecordedEvent } from '../../ports/eventStore.ts'

/** Well below EventStoreDB's 1 MiB append limit, leaving room for the other events of a batch and their metadata. */
export const CLAIM_CHECK_THRESHOLD_BYTES = 256 * 1024
/** Largest payload the claim check stores (a 6-hour transcript with word timings is a few MB). */
const MAX_CLAIM_BYTES = 512 * 1024 * 1024

export interface ClaimCheck {
  sha256: string
  key: string
  bytes: number
}

const isClaim = (e: Pick<RecordedEvent, 'data' | 'metadata'>): boolean => e.metadata?.claimCheck === true && typeof (e.data as { claimCheck?: unknown }).claimCheck === 'object'

export function withClaimCheck(store: EventStore, blobs: BlobStore, options: { thresholdBytes?: number; cacheEntries?: number } = {}): EventStore {
  const threshold = options.thresholdBytes ?? CLAIM_CHECK_THRESHOLD_BYTES
  // Every projection reads the same event: keep the last few payloads rather than fetch each time.
  const cache = new Map<string, Record<string, unknown>>()
  const cacheEntries = options.cacheEntries ?? 16

  const check = async (data: Record<string, unknown>): Promise<ClaimCheck> => {
    const json = Buffer.from(JSON.stringify(data))
    const sha256 = createHash('sha256').update(json).digest('hex')
    const key = `claims/${sha256}.json`
    if (!(await blobs.stat(key))) await blobs.put(key, Readable.from([json]), { contentType: 'application/json', maxBytes: MAX_CLAIM_BYTES })
    return { sha256, key, bytes: json.length }
  }

  const outOfEvents = async (events: EventToAppend[]): Promise<EventToAppend[]> => {
    const sizes = events.map((e) => Buffer.byteLength(JSON.stringify(e.data)))
    let total = sizes.reduce((a, b) => a + b, 0)
    if (total <= threshold) return events
    const out = [...events]
    for (const i of sizes.map((_, i) => i).sort((a, b) => sizes[b]! - sizes[a]!)) {
      if (total <= threshold) break
      const e = out[i]!
      const claim = await check(e.data)
      out[i] = { ...e, data: { claimCheck: claim }, metadata: { ...e.metadata, claimCheck: true } }
      total -= sizes[i]!
    }
    return out
  }

  const resolve = async (e: RecordedEvent): Promise<RecordedEvent> => {
    if (!isClaim(e)) return e
    const claim = (e.data as unknown as { claimCheck: ClaimCheck }).claimCheck
    let data = cache.get(claim.sha256)
    if (!data) {
      const chunks: Buffer[] = []
      for await (const c of await blobs.read(claim.key)) chunks.push(Buffer.from(c as Uint8Array))
      const json = Buffer.concat(chunks)
      const actual = createHash('sha256').update(json).digest('hex')
      if (actual !== claim.sha256) throw new Error(`claim check ${claim.key} of event ${e.id}: content hash ${actual} does not match ${claim.sha256}`)
      data = JSON.parse(json.toString('utf8')) as Record<string, unknown>
      cache.set(claim.sha256, data)
      if (cache.size > cacheEntries) cache.delete(cache.keys().next().value!)
    }
    const { claimCheck: _, ...metadata } = e.metadata
    return { ...e, data: structuredClone(data), metadata }
  }
  const resolveAll = (events: RecordedEvent[]) => (events.some(isClaim) ? Promise.all(events.map(resolve)) : Promise.resolve(events))

  return {
    appendToStream: async (streamName, events, options) => store.appendToStream(streamName, await outOfEvents(events), options),
    readStream: async (streamName, options) => {
      const r = await store.readStream(streamName, options)
      return { ...r, events: await resolveAll(r.events) }
    },
    readAll: async (options) => resolveAll(await store.readAll(options)),
    readAllRaw: (options) => readLog(store, options),
    subscribeToAll: (options) => ({
      async *[Symbol.asyncIterator]() {
        for await (const e of store.subscribeToAll(options)) yield await resolve(e)
      },
    }),
    // Optional capabilities pass through, or the composed store would silently lose them.
    ...(store.setStreamRetention ? { setStreamRetention: store.setStreamRetention.bind(store) } : {}),
    ...(store.deleteStream ? { deleteStream: store.deleteStream.bind(store) } : {}),
    close: () => store.close(),
  }
}
