// The monthly minute quota for uploaded audio, stream `minutes-<accountId>`. Finalizing an
// upload reserves its minutes (rounded up); a transcription that fails gives them back. Like
// credits, the cycle is the calendar month (UTC) and nothing carries over.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { cycleOf, type CycleId } from '../credits/plans.ts'

export const minutesStream = (accountId: string) => `minutes-${accountId}`

export type MinutesReserved = DomainEvent<'MinutesReserved', { noteId: string; minutes: number; cycle: CycleId; usedAfter: number; at: string }>
export type MinutesReleased = DomainEvent<'MinutesReleased', { noteId: string; minutes: number; cycle: CycleId; reason: string; usedAfter: number; at: string }>
export type MinutesEvent = MinutesReserved | MinutesReleased

export type MinutesCommand =
  | { type: 'ReserveMinutes'; noteId: string; minutes: number; quota: number; now: string }
  | { type: 'ReleaseMinutes'; noteId: string; reason: string; now: string }

export interface MinutesState {
  cycle: CycleId | null
  used: number
  /** Minutes held per note in the current cycle. */
  byNote: Readonly<Record<string, number>>
}

const inCycle = (s: MinutesState, cycle: CycleId): MinutesState => (s.cycle === cycle ? s : { cycle, used: 0, byNote: {} })

export const minutesDecider: Decider<MinutesCommand, MinutesEvent, MinutesState> = {
  initialState: () => ({ cycle: null, used: 0, byNote: {} }),
  evolve(s, e) {
    const c = inCycle(s, e.data.cycle)
    switch (e.type) {
      case 'MinutesReserved':
        return { ...c, used: e.data.usedAfter, byNote: { ...c.byNote, [e.data.noteId]: e.data.minutes } }
      case 'MinutesReleased': {
        const { [e.data.noteId]: _, ...rest } = c.byNote
        return { ...c, used: e.data.usedAfter, byNote: rest }
      }
    }
  },
  decide(c, s0) {
    const cycle = cycleOf(c.now)
    const s = inCycle(s0, cycle)
    switch (c.type) {
      case 'ReserveMinutes': {
        if (s.byNote[c.noteId] !== undefined) return []
        const remaining = Math.max(0, c.quota - s.used)
        if (c.minutes > remaining) {
          throw new DomainError('quota_exceeded', `This upload needs ${c.minutes} minutes of the monthly quota and ${remaining} are left.`, {
            remaining,
            needed: c.minutes,
          })
        }
        return [{ type: 'MinutesReserved', data: { noteId: c.noteId, minutes: c.minutes, cycle, usedAfter: s.used + c.minutes, at: c.now } }]
      }
      case 'ReleaseMinutes': {
        const held = s.byNote[c.noteId]
        // Minutes of an earlier cycle are gone with it; nothing to give back.
        if (held === undefined) return []
        return [{ type: 'MinutesReleased', data: { noteId: c.noteId, minutes: held, cycle, reason: c.reason, usedAfter: s.used - held, at: c.now } }]
      }
    }
  },
}

/** Minutes charged for a duration: every started minute counts. */
export const minutesFor = (durationSeconds: number): number => Math.max(1, Math.ceil(durationSeconds / 60))
