// Decoding and cutting media (ffmpeg in production): what the speech engines need (16 kHz mono
// PCM), subtitle tracks as WebVTT, and slices for engines with an upload size limit.

// `format` is the probe's verdict (MediaInfo.formatName): the file is read as that and nothing
// else. A user's file is only ever opened as a local audio/video container (never as a playlist
// that names other files or URLs).
export interface MediaTool {
  /**
   * Decodes the first audio track to 16 kHz mono 16-bit PCM WAV (video is dropped), at most
   * `maxSeconds` of it; answers the length of what was decoded (its sample count).
   */
  toSpeechWav(input: string, output: string, options?: { format?: string | null; maxSeconds?: number; signal?: AbortSignal; onProgress?: (seconds: number) => void }): Promise<{ durationSeconds: number }>
  /** Writes subtitle stream `streamIndex` (ffprobe's index) as WebVTT. */
  extractSubtitles(input: string, streamIndex: number, output: string, options?: { format?: string | null; signal?: AbortSignal }): Promise<void>
  /** Encodes `[startSeconds, startSeconds + seconds)` of `input` as mono MP3 at `kbps`. */
  encodeSlice(input: string, output: string, slice: { startSeconds: number; seconds: number; kbps: number }, options?: { format?: string | null; signal?: AbortSignal }): Promise<void>
}
