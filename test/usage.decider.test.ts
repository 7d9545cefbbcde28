// The usage decider: monthly minutes and stored bytes, as given events / when command / then, on
// the shared DeciderSpecification (test/support/decider.ts).
import t from 'tap'
import { usageDecider, minutesFor, type UsageCommand, type UsageEvent } from '../domain/usage/usage.ts'
import { DeciderSpecification } from './support/decider.ts'

const usage = DeciderSpecification.for(usageDecider)
const NOV = '2026-11-10T10:00:00.000Z'
const DEC = '2026-12-01T00:00:01.000Z'
const reserve = (noteId: string, minutes: number, now = NOV): UsageCommand => ({ type: 'ReserveMinutes', noteId, minutes, quota: 60, now })
const reserved = (noteId: string, minutes: number, usedAfter: number): UsageEvent => ({
  type: 'MinutesReserved',
  data: { noteId, minutes, cycle: '2026-11', usedAfter, at: NOV },
})

t.test('minutes: reserved up to the quota, then quota_exceeded with remaining and needed', async (t) => {
  usage.given([]).when(reserve('a', 50)).then(t, [reserved('a', 50, 50)])
  usage.given([reserved('a', 50, 50)]).when(reserve('a', 50)).thenNothingHappened(t, 'the same note again is a retry')
  usage.given([reserved('a', 50, 50)]).when(reserve('b', 11)).thenThrows(t, 'quota_exceeded', undefined, { remaining: 10, needed: 11 })
  usage.given([reserved('a', 50, 50)]).when(reserve('b', 10)).then(t, [reserved('b', 10, 60)])
})

t.test('minutes: a note whose audio holds more than its header said takes only the difference (issue 26, item 3)', async (t) => {
  usage.given([reserved('a', 1, 1)]).when(reserve('a', 3)).then(t, [reserved('a', 2, 3)])
  usage.given([reserved('a', 1, 1), reserved('a', 2, 3)]).when(reserve('a', 3)).thenNothingHappened(t, 'a retry takes nothing more')
  usage.given([reserved('a', 1, 1), reserved('a', 2, 3)]).when({ type: 'ReleaseMinutes', noteId: 'a', reason: 'failed', now: NOV }).then(t, [
    { type: 'MinutesReleased', data: { noteId: 'a', minutes: 3, cycle: '2026-11', reason: 'failed', usedAfter: 0, at: NOV } },
  ])
  usage.given([reserved('a', 1, 1), reserved('b', 58, 59)]).when(reserve('a', 3)).thenThrows(t, 'quota_exceeded', undefined, { remaining: 1, needed: 2 })
})

t.test('minutes: a new month starts from zero; releases give minutes back in the same month only', async (t) => {
  usage.given([reserved('a', 60, 60)]).when(reserve('b', 60, DEC)).then(t, [{ type: 'MinutesReserved', data: { noteId: 'b', minutes: 60, cycle: '2026-12', usedAfter: 60, at: DEC } }])
  const release = (now: string): UsageCommand => ({ type: 'ReleaseMinutes', noteId: 'a', reason: 'failed', now })
  const released: UsageEvent = { type: 'MinutesReleased', data: { noteId: 'a', minutes: 60, cycle: '2026-11', reason: 'failed', usedAfter: 0, at: NOV } }
  usage.given([reserved('a', 60, 60)]).when(release(NOV)).then(t, [released])
  t.equal(usage.given([reserved('a', 60, 60), released]).state().minutesUsed, 0)
  usage.given([reserved('a', 60, 60)]).when(release(DEC)).thenNothingHappened(t, 'last month is gone')
})

t.test('storage: a replaced upload counts once; the quota holds; freeing gives bytes back', async (t) => {
  const alloc = (noteId: string, bytes: number): UsageCommand => ({ type: 'AllocateStorage', noteId, bytes, quota: 1000, now: NOV })
  const allocated = (noteId: string, bytes: number, storedAfter: number): UsageEvent => ({ type: 'StorageAllocated', data: { noteId, bytes, storedAfter, at: NOV } })
  usage.given([allocated('a', 600, 600)]).when(alloc('a', 700)).then(t, [allocated('a', 700, 700)], 'a replaced upload counts with its new size')
  usage.given([allocated('a', 700, 700)]).when(alloc('a', 700)).thenNothingHappened(t)
  usage.given([allocated('a', 600, 600), allocated('a', 700, 700)]).when(alloc('b', 301)).thenThrows(t, 'file_too_large', undefined, { storageBytes: 1000, storedBytes: 700 })
  const free: UsageCommand = { type: 'FreeStorage', noteId: 'a', reason: 'retention', now: NOV }
  usage.given([allocated('a', 700, 700)]).when(free).then(t, [{ type: 'StorageFreed', data: { noteId: 'a', bytes: 700, reason: 'retention', storedAfter: 0, at: NOV } }])
  usage.given([]).when(free).thenNothingHappened(t, 'freeing what is not stored is a retry')
})

t.test('every started minute of the shown (whole-second) duration counts', async (t) => {
  t.same([0, 1, 59.9, 60, 60.1, 60.5, 61, 3600].map(minutesFor), [1, 1, 1, 1, 1, 2, 2, 60])
})
