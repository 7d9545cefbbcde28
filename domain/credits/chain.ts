// Tamper evidence for the credit ledger: every ledger event carries `hash`, the SHA-256 of the
// canonical JSON of its type and data, where the data includes `prevHash`, the hash of the
// previous ledger event of the same stream (null for the first hashed event). Rewriting one
// event, even with every later balance made consistent, breaks the chain at that event (its hash
// no longer matches its contents) or at the next one (its prevHash no longer matches), unless
// every later hash is recomputed too; that rewrite changes the head hash, which an operator
// anchors outside the system (docs/credits.md, "Anchoring the ledger"). Events written before the chain
// existed carry no hash: the chain starts at the first hashed event, and an unhashed event after
// it is a break.
import { createHash } from 'node:crypto'
import type { DomainEvent } from '../decider.ts'

export type ChainLinks = {
  prevHash?: string | null
  hash?: string
}

/** JSON with object keys sorted at every level and undefined members left out (what is hashed). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

/** The hash an event must carry: over its type and its data without `hash` (with `prevHash`). */
export function ledgerEventHash(type: string, data: Record<string, unknown>): string {
  const { hash: _, ...rest } = data
  return createHash('sha256').update(canonicalJson({ type, data: rest })).digest('hex')
}

/** Links freshly decided events onto the chain whose head is `head`. */
export function chainEvents<E extends DomainEvent>(events: E[], head: string | null): E[] {
  let prev = head
  return events.map((e) => {
    const data = { ...e.data, prevHash: prev } as Record<string, unknown>
    const hash = ledgerEventHash(e.type, data)
    prev = hash
    return { ...e, data: { ...data, hash } } as E
  })
}

export interface ChainBreak {
  revision: number
  message: string
}

export interface ChainReport {
  breaks: ChainBreak[]
  /** Revision of the first hashed event (null: no event is hashed). */
  startsAt: number | null
  /** The last event's hash and revision: what an operator anchors. */
  head: { revision: number; hash: string } | null
}

/** Verifies the chain over a stream's events in revision order. */
export function verifyChain(events: readonly { revision: number; event: DomainEvent }[]): ChainReport {
  const breaks: ChainBreak[] = []
  let startsAt: number | null = null
  let last: { revision: number; hash: string } | null = null
  for (const { revision, event } of events) {
    const data = event.data as Record<string, unknown> & ChainLinks
    if (typeof data.hash !== 'string') {
      if (last) breaks.push({ revision, message: `${event.type} carries no hash after the chain began at r${startsAt}` })
      continue
    }
    if (startsAt === null) {
      startsAt = revision
      if (data.prevHash !== null) breaks.push({ revision, message: `the first hashed event names a previous hash (${String(data.prevHash).slice(0, 12)}…) that no event carries` })
    } else if (data.prevHash !== last!.hash) {
      breaks.push({ revision, message: `prevHash ${String(data.prevHash).slice(0, 12)}… is not the hash of r${last!.revision} (${last!.hash.slice(0, 12)}…): an event before it was removed, inserted or rewritten` })
    }
    const expected = ledgerEventHash(event.type, data)
    if (expected !== data.hash) breaks.push({ revision, message: `hash ${data.hash.slice(0, 12)}… does not match the event's contents (${expected.slice(0, 12)}…): the event was rewritten` })
    last = { revision, hash: data.hash }
  }
  return { breaks, startsAt, head: last }
}

/** An operator's record of a head hash kept outside the system: `<revision>:<hash>`. */
export interface Anchor {
  revision: number
  hash: string
}

export function parseAnchor(s: string): Anchor | null {
  const m = /^(\d+):([0-9a-f]{64})$/.exec(s.trim())
  return m ? { revision: Number(m[1]), hash: m[2]! } : null
}

/** Anchors that the stream no longer matches (the history up to them was rewritten, chain and all). */
export function checkAnchors(events: readonly { revision: number; event: DomainEvent }[], anchors: readonly Anchor[]): ChainBreak[] {
  const byRevision = new Map(events.map((e) => [e.revision, (e.event.data as ChainLinks).hash]))
  return anchors.flatMap((a) => {
    const hash = byRevision.get(a.revision)
    if (hash === a.hash) return []
    return [{ revision: a.revision, message: `anchored head ${a.hash.slice(0, 12)}… at r${a.revision}, the stream now has ${hash ? `${hash.slice(0, 12)}…` : 'no hashed event'} there: history up to it was rewritten` }]
  })
}
