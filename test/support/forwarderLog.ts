// What an operator reads in the analytics forwarder's log, checked as such rather than as an
// exact list of lines: a loaded machine may make Kafka fail and recover more than once around a
// restart, and the forwarder then rightly says so each time. What must hold: every line is a
// state change the forwarder reports, never the same state twice in a row (one line per change,
// not one per failed call), and every outage reported is followed by its recovery.
import type { Test } from 'tap'

export type ForwarderState = 'connecting' | 'up' | 'down'

const MESSAGES: [RegExp, ForwarderState][] = [
  [/^analytics forwarder: connecting to Kafka$/, 'connecting'],
  [/^analytics forwarder: Kafka connected$/, 'up'],
  [/^analytics forwarder: Kafka publishing again$/, 'up'],
  [/^analytics forwarder: Kafka unreachable \(.+\); retrying/, 'down'],
  // A publish, or the save or read of the forwarder's checkpoint (kept in Kafka), failing.
  [/^analytics forwarder: Kafka (publish|checkpoint save|checkpoint read) failing \(.+\); retrying/, 'down'],
]

/** The state each line reports; null for a line that is none of the forwarder's. */
export const forwarderState = (line: string): ForwarderState | null => MESSAGES.find(([re]) => re.test(line))?.[1] ?? null

/**
 * Checks the forwarder's lines as an operator needs them, from `connecting` to a recovered
 * `up`; returns how many outages they report (each with its recovery).
 */
export function checkForwarderLog(t: Test, lines: string[]): number {
  const states = lines.map(forwarderState)
  t.same(
    lines.filter((_, i) => states[i] === null),
    [],
    'every line is a state change the forwarder reports',
  )
  t.equal(states[0], 'connecting', 'it first says it is connecting')
  const repeated = states.flatMap((s, i) => (i > 0 && s === states[i - 1] ? [`${i}: ${lines[i]}`] : []))
  t.same(repeated, [], 'one line per state change: never the same state twice in a row, so never one per failed call')
  t.equal(states.at(-1), 'up', 'it ends connected: every outage it reported was followed by its recovery')
  const outages = states.filter((s) => s === 'down').length
  t.comment(`forwarder log: ${outages} outage(s) reported, each with its recovery (${lines.length} lines)`)
  return outages
}
