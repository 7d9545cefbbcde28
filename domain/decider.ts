// The decider shape (as in Emmett): pure functions, no I/O. Command handlers in `commands/`
// do the reading and appending around them.

/** A domain event before it is stored: a discriminated union member by `type`. */
export interface DomainEvent<Type extends string = string, Data extends Record<string, unknown> = Record<string, unknown>> {
  type: Type
  data: Data
}

export interface Decider<Command, Event extends DomainEvent, State> {
  /** Returns the events the command causes, or throws a DomainError when it is refused. */
  decide(command: Command, state: State): Event[]
  evolve(state: State, event: Event): State
  initialState(): State
}

/** Folds events into state, the same way the command handler and the auditor do. */
export const fold = <Event extends DomainEvent, State>(
  decider: Pick<Decider<unknown, Event, State>, 'evolve' | 'initialState'>,
  events: Iterable<Event>,
  from: State = decider.initialState(),
): State => {
  let state = from
  for (const e of events) state = decider.evolve(state, e)
  return state
}
