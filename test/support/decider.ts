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
  match?(actual: unknown, pattern: unknown, message: string): unknown
}

export interface DecisionSpec<Event> {
  /** The events the command causes, in order. */
  then(t: Assert, expected: Event[], message?: string): void
  /** The events the command causes match these patterns (tap's `t.match`: listed fields only), in order and number. */
  thenMatches(t: Assert, expected: unknown[], message?: string): void
  /** The command is refused with this DomainError (or OAuthError) code (and, when given, a message matching `pattern`
   *  or the error's `extra` fields matching `extra`). */
  thenThrows(t: Assert, code: string, pattern?: RegExp, extra?: Record<string, unknown>): void
  /** The command is accepted and changes nothing (an idempotent repeat). */
  thenNothingHappened(t: Assert, message?: string): void
  /** The raw decision, for assertions the three above do not cover. */
  events(): Event[]
}

export const DeciderSpecification = {
  /** `evolveStream`: for a decider that shares its stream with others (the note stream), the evolve
   *  that folds every event of the stream, so `given` can hold the other deciders' events too. */
  for<Command, Event extends DomainEvent, State, History extends DomainEvent = Event>(
    decider: Decider<Command, Event, State>,
    evolveStream?: (state: State, event: History) => State,
  ) {
    const folder = { initialState: decider.initialState, evolve: evolveStream ?? (decider.evolve as unknown as (state: State, event: History) => State) }
    return {
      given(history: History[] = []) {
        return {
          /** The state the history folds to, for the rare assertion on evolve itself. */
          state: () => fold(folder, history),
          when(command: Command): DecisionSpec<Event> {
            const decide = () => decider.decide(command, fold(folder, history))
            return {
              events: decide,
              then(t, expected, message) {
                t.same(decide(), expected, message ?? `${describe(command)} decides ${expected.map((e) => e.type).join(', ') || 'nothing'}`)
              },
              thenMatches(t, expected, message) {
                const events = decide()
                const what = message ?? `${describe(command)} decides ${expected.map((e) => (e as { type?: string }).type ?? '?').join(', ')}`
                if (events.length !== expected.length) {
                  t.fail(`${what}: expected ${expected.length} events, got ${JSON.stringify(events.map((e) => e.type))}`)
                  return
                }
                if (!t.match) throw new Error('thenMatches needs a tap test (t.match)')
                t.match(events, expected, what)
              },
              thenThrows(t, code, pattern, extra) {
                try {
                  const events = decide()
                  t.fail(`${describe(command)} should be refused with ${code}, but decided ${JSON.stringify(events.map((e) => e.type))}`)
                } catch (err) {
                  // DomainError, or a protocol error with its own code (OAuthError): both carry `code`.
                  if (!isDomainError(err) && !(err instanceof Error && err.name === 'OAuthError')) throw err
                  t.equal((err as { code: string }).code, code, `${describe(command)} is refused with ${code}`)
                  if (pattern && !pattern.test(err.message)) t.fail(`message ${JSON.stringify(err.message)} does not match ${pattern}`)
                  if (extra && isDomainError(err)) t.same(err.extra, extra, `${describe(command)} is refused with ${JSON.stringify(extra)}`)
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

/**
 * A history built the way the system builds it: each command decided on the state the earlier
 * ones left. `run` returns what one command decided; `events` and `state` are everything so far.
 */
export function recorder<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>) {
  let state = decider.initialState()
  const events: Event[] = []
  return {
    events,
    get state() {
      return state
    },
    run(command: Command): Event[] {
      const out = decider.decide(command, state)
      state = fold(decider, out, state)
      events.push(...out)
      return out
    },
  }
}
