// Holds whose owner is gone: a reservation is made first and its owner (the note an import
// creates, the request an analysis runs in) is recorded right after, in another stream. A crash
// between the two leaves credits held for nothing. A hold older than the lease whose owner never
// appeared is an orphan: the sweeper releases it (by an event) and the auditor reports it until
// then. An import's owner is its note (it settles the hold itself once it exists, however long
// the transcription); any other hold belongs to a synchronous request, which never outlives the
// lease, so past the lease it is an orphan in every case.
import type { LedgerState } from './ledger.ts'

/** Operations whose hold is owned by the note named in it. */
export const NOTE_OWNED_HOLDS: ReadonlySet<string> = new Set(['import'])

export interface OrphanHold {
  reservationId: string
  operation: string
  amount: number
  noteId: string | null
  at: string
}

/** Note ids whose existence decides whether a hold is orphaned (what the caller must look up). */
export function ownerNotesToCheck(reservations: LedgerState['reservations']): string[] {
  return [...new Set(Object.values(reservations).flatMap((h) => (NOTE_OWNED_HOLDS.has(h.operation) && h.noteId ? [h.noteId] : [])))]
}

export function orphanHolds(reservations: LedgerState['reservations'], now: string, leaseMs: number, noteExists: (noteId: string) => boolean): OrphanHold[] {
  const cutoff = Date.parse(now) - leaseMs
  return Object.entries(reservations).flatMap(([reservationId, h]) => {
    if (!(Date.parse(h.at) <= cutoff)) return []
    if (NOTE_OWNED_HOLDS.has(h.operation) && h.noteId && noteExists(h.noteId)) return []
    return [{ reservationId, operation: h.operation, amount: h.amount, noteId: h.noteId, at: h.at }]
  })
}

export const orphanReason = (h: OrphanHold, leaseMs: number) =>
  `hold ${h.reservationId} (${h.operation}, ${h.amount} credits${h.noteId ? `, note ${h.noteId}` : ''}) is older than the lease (${Math.round(leaseMs / 1000)} s) and its owner never appeared`
