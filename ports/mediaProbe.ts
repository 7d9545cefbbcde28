// Reads what a media file is (ffprobe in production): enough to price it and to reject what is
// not audio or video before any work is queued.
export interface MediaInfo {
  durationSeconds: number
  hasAudio: boolean
  hasVideo: boolean
  audioCodec: string | null
  sampleRate: number | null
  channels: number | null
  /** Subtitle streams inside the file (published captions). */
  subtitleStreams: { index: number; codec: string; language: string | null }[]
  formatName: string
}

export interface MediaProbe {
  /** Null when the file is not media ffprobe can read. */
  probe(path: string): Promise<MediaInfo | null>
}
