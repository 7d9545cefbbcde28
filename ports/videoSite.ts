// Video-sharing pages (yt-dlp in production, detected at run time).

export interface VideoSiteMedia {
  mediaPath: string
  /** WebVTT subtitle files the site publishes (uploader's own captions first). */
  subtitlePaths: string[]
  title: string | null
  description: string | null
  durationSeconds: number | null
  recordedAt: string | null
}

export interface VideoSite {
  /** Null when the tool is not installed here. */
  available(): Promise<{ version: string } | null>
  fetch(pageUrl: string, workDir: string, options: { maxBytes: number; signal?: AbortSignal }): Promise<VideoSiteMedia>
}
