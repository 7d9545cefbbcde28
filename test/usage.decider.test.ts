// The usage decider: monthly minutes and stored bytes, as given events / when command / then.
import t from 'tap'
import { fold } from '../domain/decider.ts'
import { DomainError } from '../domain/errors.ts'
import { usageDecider, minutesFor, type UsageCommand, type UsageEvent } from '../domain/usage/usage.ts'

const given = (...commands: UsageCommand[]) => {
  let state = usageDecider.initialState()
  const events: UsageEvent[] = []
  for (const c of commands) {
    const out = usageDecider.decide(c, state)
    events.push(...out)
    state = fold(usageDecider, out, state)
  }
  return state
}
const NOV = '2026-11-10T10:00:00.000Z'
const DEC = '2026-12-01T00:00:01.000Z'
const reserve = (noteId: string, minutes: number, now = NOV): UsageCommand => ({ type: 'ReserveMinutes', noteId, minutes, quota: 60, now })

t.test('minutes: reserved up to the quota, then quota_exceeded with remaining and needed', async (t) => {
  const s = given(reserve('a', 50))
  t.same(usageDecider.decide(reserve('a', 50), s), [], 'the same note again is a retry')
  t.throws(() => usageDecider.decide(reserve('b', 11), s), new DomainError('quota_exceeded', '', { remaining: 10, needed: 11 }))
  t.equal(usageDecider.decide(reserve('b', 10), s).length, 1)
})

t.test('minutes: a new month starts from zero; releases give minutes back in the same month only', async (t) => {
  const s = given(reserve('a', 60))
  t.equal(usageDecider.decide(reserve('b', 60, DEC), s).length, 1)
  const released = given(reserve('a', 60), { type: 'ReleaseMinutes', noteId: 'a', reason: 'failed', now: NOV })
  t.equal(released.minutesUsed, 0)
  t.same(usageDecider.decide({ type: 'ReleaseMinutes', noteId: 'a', reason: 'failed', now: DEC }, s), [], 'last month is gone')
})

t.test('storage: a replaced upload counts once; the quota holds; freeing gives bytes back', async (t) => {
  const alloc = (noteId: string, bytes: number): UsageCommand => ({ type: 'AllocateStorage', noteId, bytes, quota: 1000, now: NOV })
  const s = given(alloc('a', 600), alloc('a', 700))
  t.equal(s.storedBytes, 700)
  t.throws(() => usageDecider.decide(alloc('b', 301), s), { code: 'file_too_large' })
  const freed = given(alloc('a', 700), { type: 'FreeStorage', noteId: 'a', reason: 'retention', now: NOV })
  t.equal(freed.storedBytes, 0)
})

t.test('every started minute of the shown (whole-second) duration counts', async (t) => {
  t.same([0, 1, 59.9, 60, 60.1, 60.5, 61, 3600].map(minutesFor), [1, 1, 1, 1, 1, 2, 2, 60])
})
