// A podcast RSS feed, read (fast-xml-parser in production) into what the importer needs.

export interface FeedTranscript {
  url: string
  /** MIME type as the feed says (`text/vtt`, `application/x-subrip`, `application/json`, ...). */
  type: string | null
  language: string | null
  rel: string | null
}

export interface FeedEpisode {
  guid: string | null
  title: string | null
  description: string | null
  link: string | null
  enclosure: { url: string; type: string | null; length: number | null } | null
  /** ISO 8601, from pubDate. */
  publishedAt: string | null
  durationSeconds: number | null
  transcripts: FeedTranscript[]
}

export interface PodcastFeed {
  title: string | null
  language: string | null
  episodes: FeedEpisode[]
}

export interface PodcastFeedParser {
  /** Throws when the text is not an RSS feed. */
  parse(xml: string): PodcastFeed
}
