// Where a server-side request (an import, a feed, a webhook) may connect: only to public
// addresses, judged on parsed bytes (see ipAddress.ts). An IPv6 address that carries an IPv4
// address (IPv4-mapped, -compatible, -translated, NAT64, 6to4, Teredo) is judged by the IPv4 it
// carries, since that is where the packets end up; the special-purpose ranges of both families
// (IANA's registries: loopback, private, link-local and the cloud metadata address, CGNAT,
// documentation, benchmarking, multicast, reserved...) are refused. An operator's allowlist
// (IMPORT_ALLOW_HOSTS, WEBHOOK_ALLOW_HOSTS) may admit names and addresses for self-hosting; an
// allowlisted address admits exactly that address in its own family, never an IPv6 spelling of an
// allowlisted IPv4 address, so no spelling trick turns an allowlist entry into a wider door.
import { formatIp, formatIPv4, inPrefix, parseIp, parseIPv4, type IpBytes } from './ipAddress.ts'

export type AddressClass =
  | 'public'
  | 'this-network'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'carrier-grade-nat'
  | 'ietf-protocol-assignments'
  | 'documentation'
  | 'benchmarking'
  | 'multicast'
  | 'reserved'
  | 'broadcast'
  | 'unspecified'
  | 'unique-local'
  | 'site-local'
  | 'discard-only'
  | 'local-use-nat64'
  | 'not-an-address'

/** How an IPv6 address carries an IPv4 address, and where. */
export type Embedding = 'ipv4-mapped' | 'ipv4-compatible' | 'ipv4-translated' | 'nat64' | '6to4' | 'teredo-server' | 'teredo-client'

export interface ClassifiedAddress {
  /** Canonical text of the address (RFC 5952 for IPv6). */
  address: string
  family: 4 | 6 | null
  /** The address's own class; for an embedding, the worst class of the IPv4 addresses it carries. */
  class: AddressClass
  /** The IPv4 addresses an IPv6 address carries, each with its class. */
  carries: { via: Embedding; ipv4: string; class: AddressClass }[]
}

type Range = [prefix: string, bits: number, cls: AddressClass]

// IANA IPv4 Special-Purpose Address Registry, the ranges that are not globally reachable, plus
// multicast and the reserved 240/4 (whose last address is the limited broadcast).
const V4_RANGES: Range[] = [
  ['0.0.0.0', 8, 'this-network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade-nat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // 169.254.169.254 is the cloud metadata service
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'ietf-protocol-assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'], // the deprecated 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'],
  ['240.0.0.0', 4, 'reserved'],
]

// IANA IPv6 Special-Purpose Address Registry. Outside 2000::/3 nothing is global unicast, so
// whatever is not listed there is reserved; the embeddings are decided before these ranges.
const V6_RANGES: Range[] = [
  ['64:ff9b:1::', 48, 'local-use-nat64'],
  ['100::', 64, 'discard-only'],
  ['2001::', 23, 'ietf-protocol-assignments'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
]

const compile = (ranges: Range[]) => ranges.map(([p, bits, cls]) => ({ prefix: parseIp(p)!.bytes, bits, cls }))
const V4 = compile(V4_RANGES)
const V6 = compile(V6_RANGES)
const GLOBAL_UNICAST = { prefix: parseIp('2000::')!.bytes, bits: 3 }

const v6 = (text: string) => parseIp(text)!.bytes
// Where each embedding lives (prefix) and which 4 bytes are the IPv4 address (offset); Teredo's
// client address is stored inverted (RFC 4380).
const EMBEDDINGS: { via: Embedding; prefix: Uint8Array; bits: number; offset: number; inverted?: boolean }[] = [
  { via: 'ipv4-mapped', prefix: v6('::ffff:0:0'), bits: 96, offset: 12 },
  { via: 'ipv4-translated', prefix: v6('::ffff:0:0:0'), bits: 96, offset: 12 },
  { via: 'nat64', prefix: v6('64:ff9b::'), bits: 96, offset: 12 },
  { via: '6to4', prefix: v6('2002::'), bits: 16, offset: 2 },
  { via: 'teredo-server', prefix: v6('2001::'), bits: 32, offset: 4 },
  { via: 'teredo-client', prefix: v6('2001::'), bits: 32, offset: 12, inverted: true },
  { via: 'ipv4-compatible', prefix: v6('::'), bits: 96, offset: 12 },
]

function classifyV4(b: Uint8Array): AddressClass {
  return V4.find((r) => inPrefix(b, r.prefix, r.bits))?.cls ?? 'public'
}

function classifyV6(b: Uint8Array): { cls: AddressClass; carries: ClassifiedAddress['carries'] } {
  if (b.every((x) => x === 0)) return { cls: 'unspecified', carries: [] }
  if (b.subarray(0, 15).every((x) => x === 0) && b[15] === 1) return { cls: 'loopback', carries: [] }
  const carries = EMBEDDINGS.filter((e) => inPrefix(b, e.prefix, e.bits)).map((e) => {
    const v4 = b.slice(e.offset, e.offset + 4).map((x) => (e.inverted ? x ^ 0xff : x))
    return { via: e.via, ipv4: formatIPv4(v4), class: classifyV4(v4) }
  })
  if (carries.length > 0) return { cls: carries.find((c) => c.class !== 'public')?.class ?? 'public', carries }
  const special = V6.find((r) => inPrefix(b, r.prefix, r.bits))?.cls
  if (special) return { cls: special, carries: [] }
  return { cls: inPrefix(b, GLOBAL_UNICAST.prefix, GLOBAL_UNICAST.bits) ? 'public' : 'reserved', carries: [] }
}

export function classifyAddress(text: string): ClassifiedAddress {
  const ip = parseIp(text)
  if (!ip) return { address: text, family: null, class: 'not-an-address', carries: [] }
  if (ip.family === 4) return { address: formatIp(ip), family: 4, class: classifyV4(ip.bytes), carries: [] }
  const { cls, carries } = classifyV6(ip.bytes)
  return { address: formatIp(ip), family: 6, class: cls, carries }
}

/** "::ffff:7f00:1 (IPv4-mapped 127.0.0.1: loopback)", for refusals people read. */
export function describeAddress(c: ClassifiedAddress): string {
  const bad = c.carries.filter((x) => x.class !== 'public')
  if (bad.length > 0) return `${c.address} (${bad.map((x) => `${x.via} ${x.ipv4}: ${x.class}`).join(', ')})`
  return `${c.address} (${c.class})`
}

// ---- the allowlist ---------------------------------------------------------------------------

/** A host as requests and allowlists know it: lower case, no IPv6 brackets, no trailing dot. */
export interface Target {
  host: string
  /** The effective port (the scheme's default when the URL names none). */
  port: number
}

export function targetOf(url: URL): Target {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '')
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
  return { host, port }
}

export const isIpLiteral = (host: string) => parseIp(host) !== null

type AllowEntry = { kind: 'name'; name: string; port: number | null } | { kind: 'net'; ip: IpBytes; bits: number; port: number | null }

const PORT = /^\d{1,5}$/

/** One allowlist entry: `name`, `name:port`, an IPv4 or IPv6 address (`[v6]:port` with a port), or a CIDR. */
export function parseAllowEntry(raw: string): AllowEntry | null {
  const entry = raw.trim().toLowerCase().replace(/\.$/, '')
  if (!entry) return null
  const cidr = /^\[?([^\]/]+)\]?\/(\d{1,3})$/.exec(entry)
  if (cidr) {
    const ip = parseIp(cidr[1]!)
    const bits = Number(cidr[2])
    return ip && bits <= (ip.family === 4 ? 32 : 128) ? { kind: 'net', ip, bits, port: null } : null
  }
  const bare = parseIp(entry)
  if (bare) return { kind: 'net', ip: bare, bits: bare.family === 4 ? 32 : 128, port: null }
  const withPort = /^\[([^\]]+)\]:(\d+)$/.exec(entry) ?? /^([^:[\]]+):(\d+)$/.exec(entry)
  const host = withPort ? withPort[1]! : entry
  const port = withPort && PORT.test(withPort[2]!) ? Number(withPort[2]) : null
  if (withPort && (port === null || port > 65535)) return null
  const ip = parseIp(host)
  if (ip) return { kind: 'net', ip, bits: ip.family === 4 ? 32 : 128, port }
  if (!/^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$/.test(host)) return null
  return { kind: 'name', name: host, port }
}

/** Checks a whole allowlist; throws naming the first entry that is not a host, address or CIDR. */
export function parseAllowlist(entries: readonly string[]): AllowEntry[] {
  return entries.map((e) => {
    const parsed = parseAllowEntry(e)
    if (!parsed) throw new Error(`The allowlist entry ${JSON.stringify(e)} is not a host name, host:port, IP address or CIDR range.`)
    return parsed
  })
}

function allowed(entries: readonly AllowEntry[], target: Target, ip: IpBytes): boolean {
  const literal = isIpLiteral(target.host)
  return entries.some((e) => {
    if (e.port !== null && e.port !== target.port) return false
    // A name entry vouches for whatever its name resolves to; an IP literal in a URL is no name.
    if (e.kind === 'name') return !literal && e.name === target.host
    return e.ip.family === ip.family && inPrefix(ip.bytes, e.ip.bytes, e.bits)
  })
}

/** Why a connection to `ip` for `target` is refused, or null when it may go ahead (public, or allowlisted). */
export type AddressCheck = (target: Target, ip: string) => string | null

export function addressPolicy(allowlist: readonly string[]): AddressCheck {
  const entries = parseAllowlist(allowlist)
  return (target, ip) => {
    const c = classifyAddress(ip)
    if (c.class === 'public') return null
    const parsed = parseIp(ip)
    if (parsed && allowed(entries, target, parsed)) return null
    return `non-public address ${describeAddress(c)}`
  }
}
