// One writer per projection (and for the Kafka forwarder) when several instances run against one
// read-model store (a rolling deploy, or two `projections` processes for availability). Each
// instance follows the log; only the holder of the projection's lease applies a batch. The lease
// is a document in the read-model store (`_leases`: holder, expiry), taken with one conditional
// update (free, expired, or already ours), renewed on a timer (and by a batch that finds it a third through its life), and taken
// over by a waiting instance once it has expired (the holder died or hung). A taker first drops
// the events the previous holder's checkpoint already covers, so a takeover re-applies nothing;
// if the old holder was only slow and writes once more, the projections' per-event guards
// (revision or event id in the filter) keep its late writes from changing anything.
import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
import { DuplicateKeyError, type DocumentStore } from '../ports/documentStore.ts'
import { readCheckpoint, type Projection } from './runner.ts'

export const LEASES = '_leases'
type LeaseDoc = { _id: string; holder: string; expiresAt: number; takenAt: string }

export interface LeaseOptions {
  /** The lease lapses this long after its last renewal (LEASE_TTL_SECONDS; default 30 s). */
  ttlMs?: number
  /** How often a waiting instance looks whether the lease is free (default ttl / 6). */
  pollMs?: number
  holder?: string
  /** Where the projection's checkpoint is read on a takeover (default: the read-model store; the forwarder's lives in Kafka). */
  checkpoint?: (name: string) => Promise<number>
}

export interface Leased {
  readonly projection: Projection
  /** This instance holds the lease now (as far as it last saw). */
  holds(): boolean
  /** Lets go of the lease (another instance may take it at once) and stops waiting for it. */
  release(): Promise<void>
  /** One attempt to take (or renew) the lease now, without waiting: true when this instance holds it. */
  tryHold(): Promise<boolean>
}

export class LeaseReleased extends Error {
  override readonly name = 'LeaseReleased'
}

/** `projection`, applying batches only while this instance holds its lease in `docs`. */
export function leased(projection: Projection, docs: DocumentStore, options: LeaseOptions = {}): Leased {
  const ttlMs = options.ttlMs ?? 30_000
  const pollMs = options.pollMs ?? Math.max(50, Math.floor(ttlMs / 6))
  const holder = options.holder ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  const leases = docs.collection<LeaseDoc>(LEASES)
  let held = false
  let renewedAt = 0
  let released = false
  let wake: (() => void) | null = null
  let renewTimer: NodeJS.Timeout | null = null

  /** One attempt: take or renew the lease. */
  const tryTake = async (): Promise<boolean> => {
    const now = Date.now()
    const set = { holder, expiresAt: now + ttlMs }
    const update = async () => (await leases.updateOne({ _id: projection.name, $or: [{ holder }, { expiresAt: { $lt: now } }] }, { $set: set })).matchedCount === 1
    if (await update()) return (renewedAt = now), true
    try {
      await leases.insertOne({ _id: projection.name, ...set, takenAt: new Date(now).toISOString() })
      renewedAt = now
      return true
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err
      // The document that came first may be this instance's own (its renewal timer and a
      // rebuild both found the lease gone): only the conditional update can tell.
      if (await update()) return (renewedAt = now), true
      return false
    }
  }

  const startRenewing = () => {
    renewTimer ??= setInterval(() => {
      tryTake().then(
        (ok) => (held = ok),
        () => (held = false),
      )
    }, Math.max(50, Math.floor(ttlMs / 3)))
    renewTimer.unref()
  }

  /** Resolves once this instance holds the lease; true when it has just taken it over. */
  const acquire = async (): Promise<boolean> => {
    const had = held
    // Renewed within the last third of its life (the timer keeps it so): no round trip per batch.
    if (held && Date.now() - renewedAt < ttlMs / 3) return false
    for (;;) {
      if (released) throw new LeaseReleased(`the lease of ${projection.name} was released`)
      if (await tryTake()) {
        held = true
        startRenewing()
        return !had
      }
      held = false
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, pollMs)
        wake = () => (clearTimeout(t), resolve())
      })
      wake = null
    }
  }

  const wrapped: Projection = {
    name: projection.name,
    ...(projection.filter ? { filter: projection.filter } : {}),
    collections: projection.collections,
    ...(projection.setup ? { setup: (d: DocumentStore) => projection.setup!(d) } : {}),
    async handle(events, store) {
      const justTaken = await acquire()
      // Taken over: what the previous holder applied (its checkpoint) is not applied again.
      const from = justTaken ? await (options.checkpoint ? options.checkpoint(projection.name) : readCheckpoint(store, projection.name)) : -1
      const todo = from >= 0 ? events.filter((e) => e.globalPosition > from) : events
      if (todo.length > 0) await projection.handle(todo, store)
    },
  }

  return {
    projection: wrapped,
    holds: () => held,
    async tryHold() {
      if (released) return false
      held = await tryTake()
      if (held) startRenewing()
      return held
    },
    async release() {
      released = true
      wake?.()
      if (renewTimer) clearInterval(renewTimer)
      if (held) await leases.updateOne({ _id: projection.name, holder }, { $set: { expiresAt: 0 } }).catch(() => {})
      held = false
    },
  }
}
