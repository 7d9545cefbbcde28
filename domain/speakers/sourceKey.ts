// Which "source" a note comes from (a podcast, a channel, a show), so names the user confirmed on
// one episode can be suggested on the next (the roster per source). One function decides it,
// from what the note has; a note with no recognisable source has no roster (null).
//
// In order of preference:
// 1. show or channel metadata, when the pipeline recorded it (NoteSourceMetadataRecorded):
//    `feedUrl`, then `showId`, then `channelId` (each prefixed with its kind);
// 2. the link itself: a podcast feed (`podcast-rss`) is the show; a directory page with an
//    Apple-style `id123` is that show; a video-site channel page (`/@handle`, `/channel/ID`,
//    `/c/name`, `/user/name`) is the channel; a direct file link shares its source with the
//    files in the same folder of the same host;
// 3. otherwise (uploads, recordings, single video pages without channel metadata): none.

export interface SourceMetadata {
  /** Show or channel title, as published. */
  showTitle?: string | null
  /** A stable id the provider gives the show (podcast GUID, directory id). */
  showId?: string | null
  /** The feed a podcast episode came from. */
  feedUrl?: string | null
  channelId?: string | null
  channelName?: string | null
  /** The published author or owner of the show or channel. */
  author?: string | null
  /** People the show names as hosts (e.g. podcast:person role host). */
  hosts?: string[] | null
  /** People the episode names as guests (e.g. podcast:person role guest). */
  guests?: string[] | null
  episodeTitle?: string | null
}

export interface NoteSource {
  provider: string | null
  sourceUrl: string | null
  metadata: SourceMetadata | null
}

function normalizedUrl(raw: string): URL | null {
  try {
    const u = new URL(raw)
    u.hash = ''
    u.hostname = u.hostname.toLowerCase().replace(/^www\./, '')
    return u
  } catch {
    return null
  }
}

const hostPath = (u: URL) => `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname.replace(/\/+$/, '')}`

export function sourceKeyOf(n: NoteSource): string | null {
  const m = n.metadata
  if (m?.feedUrl) {
    const u = normalizedUrl(m.feedUrl)
    if (u) return `feed:${hostPath(u)}${u.search}`
  }
  if (m?.showId) return `show:${n.provider ?? 'any'}:${m.showId}`
  if (m?.channelId) return `channel:${n.provider ?? 'any'}:${m.channelId}`
  if (!n.sourceUrl) return null
  const u = normalizedUrl(n.sourceUrl)
  if (!u) return null
  switch (n.provider) {
    case 'podcast-rss':
      return `feed:${hostPath(u)}${u.search}`
    case 'podcast-directory': {
      const id = /\/id(\d+)(?:\/|$)/.exec(u.pathname)?.[1]
      return id ? `show:${u.hostname}:id${id}` : `show:${hostPath(u)}`
    }
    case 'videosite': {
      const channel = /^\/(@[^/]+|channel\/[^/]+|c\/[^/]+|user\/[^/]+)/.exec(u.pathname)?.[1]
      return channel ? `channel:${u.hostname}:${channel.toLowerCase()}` : null
    }
    case 'direct': {
      const dir = u.pathname.replace(/\/[^/]*$/, '')
      return `folder:${u.hostname}${u.port ? `:${u.port}` : ''}${dir}`
    }
    default:
      return null
  }
}
