// What kind of link a client sent, decided from the link alone (no network): which provider
// will import it, the note's origin, and whether it is refused outright. The pipeline sniffs the
// content later and may still fail the note; here we only turn away what can never work.
import { isIP } from 'node:net'
import { DomainError } from '../errors.ts'
import type { Origin, Provider } from './note.ts'

// Services whose audio is DRM-protected: there is nothing we may download.
const PROTECTED_MUSIC_HOSTS = [
  'spotify.com',
  'music.apple.com',
  'tidal.com',
  'deezer.com',
  'music.amazon.com',
  'music.youtube.com',
  'pandora.com',
  'qobuz.com',
  'napster.com',
]
const VIDEO_SITE_HOSTS = ['youtube.com', 'youtu.be', 'vimeo.com', 'dailymotion.com', 'twitch.tv', 'tiktok.com', 'facebook.com', 'instagram.com', 'x.com', 'twitter.com', 'rumble.com', 'ted.com', 'loom.com']
const PODCAST_DIRECTORY_HOSTS = ['podcasts.apple.com', 'itunes.apple.com']
const FEED_PATH = /(\.rss|\.xml|\/feed\/?|\/rss\/?|\/feeds?\/.*)$/i
const AUDIO_EXT = /\.(mp3|m4a|aac|wav|flac|ogg|oga|opus|wma|aiff?|amr|weba)$/i
const VIDEO_EXT = /\.(mp4|m4v|mov|webm|mkv|avi|wmv|mpe?g|3gp|ts)$/i

const hostIs = (host: string, domains: readonly string[]) => domains.some((d) => host === d || host.endsWith(`.${d}`))

export interface ClassifiedUrl {
  url: URL
  provider: Provider
  origin: Origin
  /** A readable default title until the source's own title is known. */
  fallbackTitle: string
}

const invalid = (message: string) => new DomainError('invalid_audio_url', message)

export function classifySourceUrl(raw: string): ClassifiedUrl {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw invalid('audioUrl is not a valid absolute URL.')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`audioUrl must be an http(s) link, not ${url.protocol}`)
  if (url.username || url.password) throw invalid('audioUrl must not carry credentials.')
  if (!url.hostname) throw invalid('audioUrl has no host.')
  const host = url.hostname.toLowerCase().replace(/\.$/, '')
  // open.spotify.com/episode links are DRM too; the whole host family is refused.
  if (hostIs(host, PROTECTED_MUSIC_HOSTS)) throw invalid(`${host} serves protected music that cannot be imported; upload the audio file instead.`)

  const path = decodeURIComponent(url.pathname)
  const lastSegment = path.split('/').filter(Boolean).pop() ?? ''
  const fallbackTitle = lastSegment ? `${lastSegment.replace(/\.[a-z0-9]{2,4}$/i, '')} (${host})` : host
  if (hostIs(host, PODCAST_DIRECTORY_HOSTS)) return { url, provider: 'podcast-directory', origin: 'podcast', fallbackTitle }
  if (hostIs(host, VIDEO_SITE_HOSTS)) return { url, provider: 'videosite', origin: 'videosite', fallbackTitle }
  if (FEED_PATH.test(path) || /^feeds?\./.test(host)) return { url, provider: 'podcast-rss', origin: 'podcast', fallbackTitle }
  if (VIDEO_EXT.test(path)) return { url, provider: 'direct', origin: 'video', fallbackTitle }
  if (AUDIO_EXT.test(path)) return { url, provider: 'direct', origin: 'audio', fallbackTitle }
  // Anything else is fetched and sniffed by the pipeline: a file, or a feed without a telling path.
  return { url, provider: 'direct', origin: 'link', fallbackTitle }
}

// ---- addresses a server must not be made to call (SSRF) ----------------------------------------

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]

const v4ToInt = (ip: string) => ip.split('.').reduce((n, part) => (n << 8) + Number(part), 0) >>> 0

function inV4Range(ip: string, base: string, bits: number) {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0
  return (v4ToInt(ip) & mask) === (v4ToInt(base) & mask)
}

/** Loopback, private, link-local, carrier-grade NAT, multicast, documentation and reserved ranges. */
export function isNonPublicAddress(ip: string): boolean {
  const family = isIP(ip)
  if (family === 4) return V4_BLOCKED.some(([base, bits]) => inV4Range(ip, base, bits))
  if (family !== 6) return true
  const v6 = ip.toLowerCase()
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v6)
  if (mapped) return isNonPublicAddress(mapped[1]!)
  return (
    v6 === '::' ||
    v6 === '::1' ||
    /^f[cd]/.test(v6) || // unique local fc00::/7
    /^fe[89ab]/.test(v6) || // link-local fe80::/10
    /^ff/.test(v6) || // multicast
    v6.startsWith('64:ff9b:') || // NAT64 can reach private v4
    v6.startsWith('2001:db8:') // documentation
  )
}

/** `host` or `host:port` entries and CIDR ranges that are allowed although non-public. */
export function isAllowlisted(host: string, ip: string, allowlist: readonly string[]): boolean {
  for (const entry of allowlist) {
    if (entry === host || entry === ip) return true
    const [base, bits] = entry.split('/')
    if (bits !== undefined && isIP(base!) === 4 && isIP(ip) === 4 && inV4Range(ip, base!, Number(bits))) return true
  }
  return false
}

/** An address a request to `host` (`hostPort` with its port) may go to: public, or allowlisted. */
export const isPermittedAddress = (host: string, hostPort: string, ip: string, allowlist: readonly string[]): boolean =>
  !isNonPublicAddress(ip) || isAllowlisted(host, ip, allowlist) || isAllowlisted(hostPort, ip, allowlist)

/** The host of a URL as resolvers and allowlists know it (no IPv6 brackets, lower case), with and without its port. */
export function hostOf(url: URL): { host: string; hostPort: string } {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return { host, hostPort: url.port ? `${host}:${url.port}` : host }
}
