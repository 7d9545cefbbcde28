// Which Node runs the service: package.json's `engines.node` is the promise (a range of
// `^X.Y.Z` and `>=X.Y.Z` alternatives joined by `||`), and a process on another version stops at
// start with a message saying what to install, instead of failing later inside a dependency.
import { readFileSync } from 'node:fs'

type Version = [number, number, number]

function parseVersion(text: string): Version {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text.trim())
  if (!m) throw new Error(`not a version: ${text}`)
  return [Number(m[1]), Number(m[2]), Number(m[3])]
}

const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

/** Whether `version` is in `range`; throws on a range form this does not read (the test checks package.json's). */
export function inRange(version: string, range: string): boolean {
  const v = parseVersion(version)
  return range.split('||').some((alternative) => {
    const m = /^\s*(\^|>=)\s*(\S+)\s*$/.exec(alternative)
    if (!m) throw new Error(`engines.node: cannot read "${alternative.trim()}" (use ^X.Y.Z or >=X.Y.Z alternatives joined by ||)`)
    const min = parseVersion(m[2]!)
    return compare(v, min) >= 0 && (m[1] === '>=' || v[0] === min[0])
  })
}

export const supportedNodeRange = (): string =>
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node

/** Null when `version` is supported, else what to tell the operator. */
export function nodeVersionProblem(version = process.versions.node, range = supportedNodeRange()): string | null {
  if (inRange(version, range)) return null
  return `This service needs Node.js ${range} (package.json "engines"); this is Node.js ${version}. Install a supported version (e.g. the current Node 20 or 22 LTS) and run it again.`
}
