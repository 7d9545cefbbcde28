// What an account uses of its plan's allowances, stream `usage-<accountId>`:
// - minutes of uploaded audio per monthly cycle (calendar month, UTC; nothing carries over):
//   finalizing an upload reserves its minutes, a transcription that fails gives them back;
// - bytes of stored audio, not tied to a cycle: allocated when an upload's bytes are recorded,
//   freed when the audio is deleted.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { cycleOf, type CycleId } from '../credits/plans.ts'
import { streamKind } from '../streams.ts'

export const usageStream = streamKind('usage')

export type MinutesReserved = DomainEvent<'MinutesReserved', { noteId: string; minutes: number; cycle: CycleId; usedAfter: number; at: string }>
export type MinutesReleased = DomainEvent<'MinutesReleased', { noteId: string; minutes: number; cycle: CycleId; reason: string; usedAfter: number; at: string }>
export type StorageAllocated = DomainEvent<'StorageAllocated', { noteId: string; bytes: number; storedAfter: number; at: string }>
export type StorageFreed = DomainEvent<'StorageFreed', { noteId: string; bytes: number; reason: string; storedAfter: number; at: string }>
export type UsageEvent = MinutesReserved | MinutesReleased | StorageAllocated | StorageFreed

export type UsageCommand =
  | { type: 'ReserveMinutes'; noteId: string; minutes: number; quota: number; now: string }
  | { type: 'ReleaseMinutes'; noteId: string; reason: string; now: string }
  | { type: 'AllocateStorage'; noteId: string; bytes: number; quota: number; now: string }
  | { type: 'FreeStorage'; noteId: string; reason: string; now: string }

export interface UsageState {
  cycle: CycleId | null
  minutesUsed: number
  /** Minutes held per note in the current cycle. */
  minutesByNote: Readonly<Record<string, number>>
  storedBytes: number
  bytesByNote: Readonly<Record<string, number>>
}

const inCycle = (s: UsageState, cycle: CycleId): UsageState => (s.cycle === cycle ? s : { ...s, cycle, minutesUsed: 0, minutesByNote: {} })

const without = <V>(rec: Readonly<Record<string, V>>, key: string): Record<string, V> => {
  const { [key]: _, ...rest } = rec
  return rest
}

export const usageDecider: Decider<UsageCommand, UsageEvent, UsageState> = {
  initialState: () => ({ cycle: null, minutesUsed: 0, minutesByNote: {}, storedBytes: 0, bytesByNote: {} }),
  evolve(s, e) {
    switch (e.type) {
      case 'MinutesReserved': {
        const c = inCycle(s, e.data.cycle)
        // A second reservation for a note adds to the first (its audio held more than its header said).
        return { ...c, minutesUsed: e.data.usedAfter, minutesByNote: { ...c.minutesByNote, [e.data.noteId]: (c.minutesByNote[e.data.noteId] ?? 0) + e.data.minutes } }
      }
      case 'MinutesReleased': {
        const c = inCycle(s, e.data.cycle)
        return { ...c, minutesUsed: e.data.usedAfter, minutesByNote: without(c.minutesByNote, e.data.noteId) }
      }
      case 'StorageAllocated':
        return { ...s, storedBytes: e.data.storedAfter, bytesByNote: { ...s.bytesByNote, [e.data.noteId]: e.data.bytes } }
      case 'StorageFreed':
        return { ...s, storedBytes: e.data.storedAfter, bytesByNote: without(s.bytesByNote, e.data.noteId) }
    }
  },
  decide(c, s0) {
    const at = c.now
    switch (c.type) {
      case 'ReserveMinutes': {
        const cycle = cycleOf(at)
        const s = inCycle(s0, cycle)
        // The note holds at least `minutes` afterwards: what it holds already is not taken twice.
        const more = c.minutes - (s.minutesByNote[c.noteId] ?? 0)
        if (more <= 0) return []
        const remaining = Math.max(0, c.quota - s.minutesUsed)
        if (more > remaining) {
          throw new DomainError('quota_exceeded', `This upload needs ${more} more minutes of the monthly quota and ${remaining} are left.`, {
            remaining,
            needed: more,
          })
        }
        return [{ type: 'MinutesReserved', data: { noteId: c.noteId, minutes: more, cycle, usedAfter: s.minutesUsed + more, at } }]
      }
      case 'ReleaseMinutes': {
        const cycle = cycleOf(at)
        const s = inCycle(s0, cycle)
        const held = s.minutesByNote[c.noteId]
        // Minutes of an earlier cycle are gone with it; nothing to give back.
        if (held === undefined) return []
        return [{ type: 'MinutesReleased', data: { noteId: c.noteId, minutes: held, cycle, reason: c.reason, usedAfter: s.minutesUsed - held, at } }]
      }
      case 'AllocateStorage': {
        const previous = s0.bytesByNote[c.noteId] ?? 0
        if (previous === c.bytes) return []
        // A replaced upload counts once, with its new size.
        const storedAfter = s0.storedBytes - previous + c.bytes
        if (storedAfter > c.quota) {
          throw new DomainError('file_too_large', `The storage quota (${c.quota} bytes) would be exceeded: ${s0.storedBytes - previous} bytes are stored and this file has ${c.bytes}.`, {
            storageBytes: c.quota,
            storedBytes: s0.storedBytes - previous,
          })
        }
        return [{ type: 'StorageAllocated', data: { noteId: c.noteId, bytes: c.bytes, storedAfter, at } }]
      }
      case 'FreeStorage': {
        const held = s0.bytesByNote[c.noteId]
        if (held === undefined) return []
        return [{ type: 'StorageFreed', data: { noteId: c.noteId, bytes: held, reason: c.reason, storedAfter: s0.storedBytes - held, at } }]
      }
    }
  },
}

/**
 * The duration a note shows, in whole seconds (`durationSeconds`). It is also what is billed, so
 * the note and its price agree: an encoder's padding under half a second (a 2:00 MP3 that
 * measures 120.096 s) is not billed as a started minute.
 */
export const shownSeconds = (durationSeconds: number): number => Math.round(durationSeconds)

/** Minutes charged for a duration: every started minute of the shown duration counts (at least one). */
export const minutesFor = (durationSeconds: number): number => Math.max(1, Math.ceil(shownSeconds(durationSeconds) / 60))
