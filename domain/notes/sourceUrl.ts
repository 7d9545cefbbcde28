// What kind of link a client sent, decided from the link alone (no network): which provider
// will import it, the note's origin, and whether it is refused outright. The pipeline sniffs the
// content later and may still fail the note; here we only turn away what can never work.
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
