// Decoding and cutting media (ffmpeg in production): what the speech engines need (16 kHz mono
// PCM), subtitle tracks as WebVTT, and slices for engines with an upload size limit.

export interface MediaTool {
  /** Decodes the first audio track to 16 kHz mono 16-bit PCM WAV (video is dropped). */
  toSpeechWav(input: string, output: string, options?: { signal?: AbortSignal; onProgress?: (seconds: number) => void }): Promise<void>
  /** Writes subtitle stream `streamIndex` (ffprobe's index) as WebVTT. */
  extractSubtitles(input: string, streamIndex: number, output: string, options?: { signal?: AbortSignal }): Promise<void>
  /** Encodes `[startSeconds, startSeconds + seconds)` of `input` as mono MP3 at `kbps`. */
  encodeSlice(input: string, output: string, slice: { startSeconds: number; seconds: number; kbps: number }, options?: { signal?: AbortSignal }): Promise<void>
}
