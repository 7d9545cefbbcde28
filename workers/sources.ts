// The import providers (spec: `provider`): from a note's link to a local media file, the
// transcript the source already publishes (if any), and what the source says about itself.
//
// - direct: the link is downloaded and sniffed; a feed found there is read as a podcast feed.
// - podcast-rss: the feed is read and one episode chosen (domain/notes/episodes.ts); its
//   `podcast:transcript` (VTT, then JSON, then SRT) is used when it parses, and then the audio is
//   downloaded only when the feed does not give the duration.
// - podcast-directory: an Apple Podcasts style id (`/id123`) resolved through the directory's
//   lookup API (PODCAST_DIRECTORY_URL) to its feed; `?i=<episode id>` names the episode.
// - videosite: yt-dlp, when installed.
import { open, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { captionFormatOf, parseCaptions, parseVtt, type Cue } from '../domain/notes/captions.ts'
import { chooseEpisode } from '../domain/notes/episodes.ts'
import { sniff } from '../domain/notes/sniff.ts'
import { normalizeLanguage } from '../domain/languages.ts'
import type { HttpFetcher } from '../ports/httpFetcher.ts'
import type { PodcastFeed, PodcastFeedParser, FeedEpisode } from '../ports/podcastFeed.ts'
import type { VideoSite } from '../ports/videoSite.ts'
import { PipelineFailure } from '../ports/pipelineFailure.ts'
import type { PipelineStage } from '../domain/notes/transcriptionJob.ts'

export interface PublishedTranscript {
  cues: Cue[]
  language: string | null
  /** Where it came from, recorded as the transcript's provider. */
  provider: 'podcast:transcript' | 'subtitle-track' | 'videosite-subtitles'
}

export interface SourceMeta {
  title?: string
  description?: string | null
  recordedAt?: string | null
  durationSeconds?: number | null
}

export interface FetchedSource {
  /** Null when a published transcript and the feed's duration made the audio unnecessary. */
  mediaPath: string | null
  published: PublishedTranscript | null
  meta: SourceMeta
}

export interface SourceDeps {
  http: HttpFetcher
  feeds: PodcastFeedParser
  videoSite: VideoSite
  /** Base URL of the podcast directory's lookup API (Apple's: https://itunes.apple.com). */
  directoryBaseUrl: string
  maxFeedBytes: number
  maxTranscriptBytes: number
  log?: (msg: string) => void
}

export interface SourceContext {
  workDir: string
  maxBytes: number
  signal: AbortSignal
  progress(stage: PipelineStage, percent: number | null): void
}

const asSignal = (ctx: SourceContext) => ({ signal: ctx.signal })

async function head(path: string, n = 1024): Promise<Uint8Array> {
  const fh = await open(path, 'r')
  try {
    const buf = Buffer.alloc(n)
    const { bytesRead } = await fh.read(buf, 0, n, 0)
    return buf.subarray(0, bytesRead)
  } finally {
    await fh.close()
  }
}

export class Sources {
  constructor(private readonly deps: SourceDeps) {}

  async fetch(provider: string | null, sourceUrl: string, ctx: SourceContext): Promise<FetchedSource> {
    switch (provider) {
      case 'podcast-rss':
        return this.fromFeedUrl(sourceUrl, fragmentOf(sourceUrl), ctx)
      case 'podcast-directory':
        return this.fromDirectory(sourceUrl, ctx)
      case 'videosite':
        return this.fromVideoSite(sourceUrl, ctx)
      default:
        return this.direct(sourceUrl, ctx)
    }
  }

  /** Downloads media with progress; sniffs it; a feed is handed back as text. */
  private async download(url: string, ctx: SourceContext, name: string): Promise<{ path: string; kind: ReturnType<typeof sniff>['kind'] }> {
    const path = join(ctx.workDir, name)
    let last = -1
    await this.deps.http.download(url, path, {
      maxBytes: ctx.maxBytes,
      ...asSignal(ctx),
      onProgress: (bytes, total) => {
        if (!total) return
        const pct = Math.floor((bytes / total) * 100)
        if (pct >= last + 10) ctx.progress('downloading', (last = pct))
      },
    })
    return { path, kind: sniff(await head(path)).kind }
  }

  private async direct(url: string, ctx: SourceContext): Promise<FetchedSource> {
    ctx.progress('downloading', null)
    const { path, kind } = await this.download(url, ctx, 'source')
    if (kind === 'feed') return this.fromFeedText(await readFile(path, 'utf8'), url, fragmentOf(url), ctx)
    if (kind === 'html') throw new PipelineFailure('unsupported_media', 'The link leads to a web page, not to an audio or video file.')
    if (kind !== 'media') throw new PipelineFailure('unsupported_media', 'The link does not serve audio or video we can read (its bytes match no media format).')
    return { mediaPath: path, published: null, meta: {} }
  }

  private async fromFeedUrl(feedUrl: string, wanted: string | null, ctx: SourceContext): Promise<FetchedSource> {
    ctx.progress('downloading', null)
    const { body } = await this.deps.http.text(feedUrl, { maxBytes: this.deps.maxFeedBytes, accept: 'application/rss+xml, application/xml;q=0.9, */*;q=0.5', ...asSignal(ctx) })
    return this.fromFeedText(body, feedUrl, wanted, ctx)
  }

  private async fromFeedText(xml: string, feedUrl: string, wanted: string | null, ctx: SourceContext): Promise<FetchedSource> {
    let feed: PodcastFeed
    try {
      feed = this.deps.feeds.parse(xml)
    } catch (err) {
      throw new PipelineFailure('feed_invalid', `The feed could not be read: ${(err as Error).message}`)
    }
    const episode = chooseEpisode(feed.episodes, wanted)
    if (!episode) {
      if (wanted) throw new PipelineFailure('episode_not_found', `The feed has no episode matching ${JSON.stringify(wanted.slice(0, 200))}.`)
      throw new PipelineFailure('feed_invalid', 'The feed has no episode with audio.')
    }
    const meta: SourceMeta = {
      ...(episode.title ? { title: episode.title.slice(0, 200) } : {}),
      ...(episode.description ? { description: episode.description.slice(0, 5000) } : {}),
      recordedAt: episode.publishedAt,
      ...(episode.durationSeconds !== null ? { durationSeconds: episode.durationSeconds } : {}),
    }
    const published = await this.publishedTranscript(episode, feed, feedUrl, ctx)
    if (published && (episode.durationSeconds !== null || !episode.enclosure)) return { mediaPath: null, published, meta }
    if (!episode.enclosure) throw new PipelineFailure('feed_invalid', 'The episode has no audio enclosure.')
    const { path, kind } = await this.download(enclosureUrl(episode.enclosure.url, feedUrl), ctx, 'episode')
    if (kind !== 'media') throw new PipelineFailure('unsupported_media', "The episode's enclosure is not audio or video we can read.")
    return { mediaPath: path, published, meta }
  }

  /** The episode's podcast:transcript in the best format we read; null when none parses. */
  private async publishedTranscript(episode: FeedEpisode, feed: PodcastFeed, feedUrl: string, ctx: SourceContext): Promise<PublishedTranscript | null> {
    const rank = { vtt: 0, json: 1, srt: 2 } as const
    const usable = episode.transcripts
      .map((t) => ({ t, format: captionFormatOf(t.type) ?? captionFormatOf(guessType(t.url)) }))
      .filter((x): x is { t: (typeof episode.transcripts)[number]; format: 'vtt' | 'json' | 'srt' } => x.format !== null)
      .sort((a, b) => rank[a.format] - rank[b.format])
    for (const { t, format } of usable) {
      try {
        const { body } = await this.deps.http.text(new URL(t.url, feedUrl).href, { maxBytes: this.deps.maxTranscriptBytes, ...asSignal(ctx) })
        const cues = parseCaptions(format, body)
        if (cues.length > 0) return { cues, language: normalizeLanguage(t.language ?? feed.language), provider: 'podcast:transcript' }
      } catch (err) {
        // A broken published transcript is not a failed note: the audio is transcribed instead.
        if (ctx.signal.aborted) throw err
        this.deps.log?.(`podcast:transcript ${t.url} unusable: ${(err as Error).message}`)
      }
    }
    return null
  }

  private async fromDirectory(pageUrl: string, ctx: SourceContext): Promise<FetchedSource> {
    const url = new URL(pageUrl)
    const id = /\/id(\d+)/.exec(url.pathname)?.[1] ?? url.searchParams.get('id')
    if (!id || !/^\d+$/.test(id)) throw new PipelineFailure('directory_lookup_failed', 'The directory link carries no podcast id (…/id<digits>).')
    const episodeId = url.searchParams.get('i')
    ctx.progress('downloading', null)
    const base = this.deps.directoryBaseUrl.replace(/\/+$/, '')
    const lookup = async (query: string) => {
      const { body } = await this.deps.http.text(`${base}/lookup?${query}`, { maxBytes: 5 * 1024 * 1024, trusted: true, accept: 'application/json', ...asSignal(ctx) })
      try {
        return (JSON.parse(body) as { results?: Record<string, unknown>[] }).results ?? []
      } catch {
        throw new PipelineFailure('directory_lookup_failed', 'The directory answered something that is not JSON.', true)
      }
    }
    const podcast = (await lookup(`id=${id}&entity=podcast`)).find((r) => typeof r.feedUrl === 'string')
    if (!podcast) throw new PipelineFailure('directory_lookup_failed', `The directory has no podcast feed for id ${id}.`)
    let wanted: string | null = null
    if (episodeId && /^\d+$/.test(episodeId)) {
      const ep = (await lookup(`id=${id}&entity=podcastEpisode&limit=200`)).find((r) => String(r.trackId) === episodeId)
      if (!ep) throw new PipelineFailure('episode_not_found', `The directory lists no episode ${episodeId} for podcast ${id}.`)
      wanted = (typeof ep.episodeGuid === 'string' && ep.episodeGuid) || (typeof ep.episodeUrl === 'string' && ep.episodeUrl) || null
    }
    const source = await this.fromFeedUrl(podcast.feedUrl as string, wanted, ctx)
    return source
  }

  private async fromVideoSite(pageUrl: string, ctx: SourceContext): Promise<FetchedSource> {
    if (!(await this.deps.videoSite.available())) throw new PipelineFailure('videosite_unavailable', 'Video-site links need yt-dlp, which is not installed on this server.')
    ctx.progress('downloading', null)
    const v = await this.deps.videoSite.fetch(pageUrl, ctx.workDir, { maxBytes: ctx.maxBytes, ...asSignal(ctx) })
    let published: PublishedTranscript | null = null
    for (const p of v.subtitlePaths) {
      try {
        const cues = parseVtt(await readFile(p, 'utf8'))
        const lang = /\.([A-Za-z]{2,3}(?:-[A-Za-z0-9]+)?)\.vtt$/.exec(p)?.[1] ?? null
        if (cues.length > 0) {
          published = { cues, language: normalizeLanguage(lang), provider: 'videosite-subtitles' }
          break
        }
      } catch {
        // unreadable captions: transcribe the audio instead
      }
    }
    return {
      mediaPath: v.mediaPath,
      published,
      meta: {
        ...(v.title ? { title: v.title.slice(0, 200) } : {}),
        ...(v.description ? { description: v.description.slice(0, 5000) } : {}),
        ...(v.recordedAt ? { recordedAt: v.recordedAt } : {}),
        ...(v.durationSeconds !== null ? { durationSeconds: v.durationSeconds } : {}),
      },
    }
  }
}

/** The episode's audio link, resolved against the feed's; one that is no URL is the feed's fault. */
function enclosureUrl(raw: string, feedUrl: string): string {
  try {
    return new URL(raw, feedUrl).href
  } catch {
    throw new PipelineFailure('source_url_invalid', `The episode's enclosure URL ${JSON.stringify(raw.slice(0, 200))} is not a URL.`)
  }
}

/** The fragment of a link (never sent to its server): names an episode. */
function fragmentOf(url: string): string | null {
  try {
    const h = new URL(url).hash.slice(1)
    return h ? decodeURIComponent(h) : null
  } catch {
    return null
  }
}

const guessType = (url: string): string | null => {
  const path = url.split(/[?#]/)[0]!.toLowerCase()
  if (path.endsWith('.vtt')) return 'text/vtt'
  if (path.endsWith('.srt')) return 'application/x-subrip'
  if (path.endsWith('.json')) return 'application/json'
  return null
}
