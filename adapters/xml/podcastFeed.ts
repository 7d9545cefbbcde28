// Podcast RSS (with the iTunes and Podcasting 2.0 namespaces) through fast-xml-parser, the only
// file that imports it. Entities are decoded but no external entity or DTD is ever fetched.
import { XMLParser } from 'fast-xml-parser'
import type { FeedEpisode, PodcastFeed, PodcastFeedParser } from '../../ports/podcastFeed.ts'

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  isArray: (name) => name === 'item' || name === 'podcast:transcript' || name === 'enclosure',
})

type Node = Record<string, unknown>

/** The text of an element that may carry attributes or be absent. */
function text(v: unknown): string | null {
  if (v === undefined || v === null) return null
  if (typeof v === 'string' || typeof v === 'number') return String(v).trim() || null
  if (Array.isArray(v)) return text(v[0])
  if (typeof v === 'object') return text((v as Node)['#text'])
  return null
}

const attr = (v: unknown, name: string): string | null => (v && typeof v === 'object' && !Array.isArray(v) ? text((v as Node)[`@_${name}`]) : null)

/** `3600`, `60:00`, `1:00:00` (itunes:duration) to seconds. */
export function parseItunesDuration(v: string | null): number | null {
  if (!v) return null
  const parts = v.trim().split(':').map(Number)
  if (parts.length === 0 || parts.length > 3 || parts.some((p) => !Number.isFinite(p) || p < 0)) return null
  return parts.reduce((acc, p) => acc * 60 + p, 0)
}

function isoDate(v: string | null): string | null {
  if (!v) return null
  const d = new Date(v)
  return Number.isNaN(d.getTime()) ? null : d.toISOString()
}

export const fastXmlPodcastFeedParser: PodcastFeedParser = {
  parse(xml) {
    let doc: Node
    try {
      doc = parser.parse(xml) as Node
    } catch (err) {
      throw new Error(`not XML: ${(err as Error).message}`)
    }
    const channel = (doc.rss as Node | undefined)?.channel as Node | undefined
    if (!channel || typeof channel !== 'object') throw new Error('not an RSS feed (no rss/channel)')
    const items = (channel.item as Node[] | undefined) ?? []
    const episodes: FeedEpisode[] = items.map((item) => {
      const enc = (item.enclosure as Node[] | undefined)?.find((e) => attr(e, 'url'))
      const length = enc ? Number(attr(enc, 'length')) : NaN
      return {
        guid: text(item.guid),
        title: text(item.title) ?? text(item['itunes:title']),
        description: text(item['itunes:summary']) ?? text(item.description) ?? text(item['content:encoded']),
        link: text(item.link),
        enclosure: enc ? { url: attr(enc, 'url')!, type: attr(enc, 'type'), length: Number.isFinite(length) && length > 0 ? length : null } : null,
        publishedAt: isoDate(text(item.pubDate)),
        durationSeconds: parseItunesDuration(text(item['itunes:duration'])),
        transcripts: ((item['podcast:transcript'] as Node[] | undefined) ?? [])
          .filter((t) => attr(t, 'url'))
          .map((t) => ({ url: attr(t, 'url')!, type: attr(t, 'type'), language: attr(t, 'language'), rel: attr(t, 'rel') })),
      }
    })
    return { title: text(channel.title), language: text(channel.language), episodes }
  },
}
