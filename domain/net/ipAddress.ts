// IP addresses as bytes, parsed from their text forms. SSRF decisions are taken on these bytes,
// never on strings: "::ffff:127.0.0.1", "::ffff:7f00:1" and "0:0:0:0:0:ffff:7f00:1" are one
// address, and only a parser sees that. Strict: IPv4 is dotted decimal without leading zeros (what
// resolvers and the WHATWG URL parser print; anything looser is refused, not guessed); IPv6 is
// RFC 4291 text (hex groups, one "::", an optional dotted IPv4 tail, an optional "%zone").

export type IpBytes = { family: 4; bytes: Uint8Array } | { family: 6; bytes: Uint8Array }

const V4_PART = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/
const V6_GROUP = /^[0-9a-f]{1,4}$/i

export function parseIPv4(text: string): Uint8Array | null {
  const parts = text.split('.')
  if (parts.length !== 4 || !parts.every((p) => V4_PART.test(p))) return null
  return Uint8Array.from(parts.map(Number))
}

export function parseIPv6(text: string): Uint8Array | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  const zone = s.indexOf('%')
  if (zone >= 0) {
    if (zone === s.length - 1) return null
    s = s.slice(0, zone)
  }
  if (!s.includes(':')) return null
  // A dotted IPv4 tail stands for the last two groups.
  const lastColon = s.lastIndexOf(':')
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = parseIPv4(s.slice(lastColon + 1))
    if (!v4) return null
    s = `${s.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`
  }
  const halves = s.split('::')
  if (halves.length > 2) return null
  const groupsOf = (h: string) => (h === '' ? [] : h.split(':'))
  const head = groupsOf(halves[0]!)
  const rest = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (![...head, ...rest].every((g) => V6_GROUP.test(g))) return null
  const explicit = head.length + rest.length
  let groups: number[]
  if (halves.length === 2) {
    if (explicit > 7) return null
    groups = [...head.map(hex), ...new Array<number>(8 - explicit).fill(0), ...rest.map(hex)]
  } else {
    if (explicit !== 8) return null
    groups = head.map(hex)
  }
  const bytes = new Uint8Array(16)
  groups.forEach((g, i) => ((bytes[2 * i] = g >> 8), (bytes[2 * i + 1] = g & 0xff)))
  return bytes
}

const hex = (g: string) => parseInt(g, 16)

/** Either family; null for anything that is not an IP address (a host name, a typo). */
export function parseIp(text: string): IpBytes | null {
  const v4 = parseIPv4(text)
  if (v4) return { family: 4, bytes: v4 }
  const v6 = parseIPv6(text)
  return v6 ? { family: 6, bytes: v6 } : null
}

export const formatIPv4 = (b: Uint8Array) => `${b[0]}.${b[1]}.${b[2]}.${b[3]}`

/** RFC 5952 text: lower-case hex, the longest run of two or more zero groups as "::". */
export function formatIPv6(b: Uint8Array): string {
  const groups = Array.from({ length: 8 }, (_, i) => (b[2 * i]! << 8) | b[2 * i + 1]!)
  let best = { at: -1, len: 1 }
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > best.len) best = { at: i, len: j - i }
    i = j
  }
  const text = groups.map((g) => g.toString(16))
  if (best.at < 0) return text.join(':')
  return `${text.slice(0, best.at).join(':')}::${text.slice(best.at + best.len).join(':')}`
}

export const formatIp = (ip: IpBytes) => (ip.family === 4 ? formatIPv4(ip.bytes) : formatIPv6(ip.bytes))

/** Whether the first `bits` bits of `bytes` equal those of `prefix`. */
export function inPrefix(bytes: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i += 8) {
    const take = Math.min(8, bits - i)
    const mask = (0xff << (8 - take)) & 0xff
    if ((bytes[i / 8]! & mask) !== (prefix[i / 8]! & mask)) return false
  }
  return true
}
