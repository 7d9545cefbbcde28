// The decider specification every decider test uses (Emmett's DeciderSpecification):
//   DeciderSpecification.for(decider).given(events).when(command).then(events)
//   ... .thenThrows(code) / .thenNothingHappened()
// `given` takes events only (the history the decider folds), `when` one command; the assertion
// runs on the tap test it is handed, so a failing spec names the decider's own test.
import type { Decider, DomainEvent } from '../../domain/decider.ts'
import { fold } from '../../domain/decider.ts'
import { isDomainError } from '../../domain/errors.ts'

/** What the spec needs of a tap test (every call passes a message). */
interface Assert {
  same(actual: unknown, expected: unknown, message: string): unknown
  fail(message: string): unknown
  equal(actual: unknown, expected: unknown, message: string): unknown
}

export interface DecisionSpec<Event> {
  /** The events the command causes, in order. */
  then(t: Assert, expected: Event[], message?: string): void
  /** The command is refused with this DomainError code (and, when given, a message matching `pattern`). */
  thenThrows(t: Assert, code: string, pattern?: RegExp): void
  /** The command is accepted and changes nothing (an idempotent repeat). */
  thenNothingHappened(t: Assert, message?: string): void
  /** The raw decision, for assertions the three above do not cover. */
  events(): Event[]
}

export const DeciderSpecification = {
  for<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>) {
    return {
      given(history: Event[] = []) {
        return {
          when(command: Command): DecisionSpec<Event> {
            const decide = () => decider.decide(command, fold(decider, history))
            return {
              events: decide,
              then(t, expected, message) {
                t.same(decide(), expected, message ?? `${describe(command)} decides ${expected.map((e) => e.type).join(', ') || 'nothing'}`)
              },
              thenThrows(t, code, pattern) {
                try {
                  const events = decide()
                  t.fail(`${describe(command)} should be refused with ${code}, but decided ${JSON.stringify(events.map((e) => e.type))}`)
                } catch (err) {
                  if (!isDomainError(err)) throw err
                  t.equal(err.code, code, `${describe(command)} is refused with ${code}`)
                  if (pattern && !pattern.test(err.message)) t.fail(`message ${JSON.stringify(err.message)} does not match ${pattern}`)
                }
              },
              thenNothingHappened(t, message) {
                t.same(decide(), [], message ?? `${describe(command)} changes nothing`)
              },
            }
          },
        }
      },
    }
  },
}

const describe = (command: unknown) => (command as { type?: string }).type ?? 'the command'
