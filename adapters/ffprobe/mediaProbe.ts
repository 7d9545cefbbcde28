// The media-probe port over ffprobe. The binary comes from the npm registry
// (@ffprobe-installer/ffprobe ships it inside a platform package, so `npm install` needs no
// other download); FFPROBE_PATH overrides it, e.g. with a system ffprobe. The only file that
// imports the package.
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import type { MediaInfo, MediaProbe } from '../../ports/mediaProbe.ts'

const require = createRequire(import.meta.url)

export function ffprobePath(): string {
  if (process.env.FFPROBE_PATH) return process.env.FFPROBE_PATH
  return (require('@ffprobe-installer/ffprobe') as { path: string }).path
}

interface ProbeOutput {
  format?: { duration?: string; format_name?: string }
  streams?: { index: number; codec_type?: string; codec_name?: string; sample_rate?: string; channels?: number; duration?: string; tags?: { language?: string } }[]
}

export function ffprobeMediaProbe(binary = ffprobePath(), timeoutMs = 30_000): MediaProbe {
  return {
    probe(path) {
      return new Promise((resolve) => {
        execFile(
          binary,
          ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path],
          { timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024 },
          (err, stdout) => {
            if (err) return resolve(null)
            let out: ProbeOutput
            try {
              out = JSON.parse(stdout) as ProbeOutput
            } catch {
              return resolve(null)
            }
            const streams = out.streams ?? []
            const audio = streams.find((s) => s.codec_type === 'audio')
            const video = streams.find((s) => s.codec_type === 'video' && s.codec_name !== 'mjpeg' && s.codec_name !== 'png')
            const duration = Number(out.format?.duration ?? audio?.duration ?? NaN)
            if (!audio && !video) return resolve(null)
            resolve({
              durationSeconds: Number.isFinite(duration) ? duration : 0,
              hasAudio: !!audio,
              hasVideo: !!video,
              audioCodec: audio?.codec_name ?? null,
              sampleRate: audio?.sample_rate ? Number(audio.sample_rate) : null,
              channels: audio?.channels ?? null,
              subtitleStreams: streams
                .filter((s) => s.codec_type === 'subtitle')
                .map((s) => ({ index: s.index, codec: s.codec_name ?? 'unknown', language: s.tags?.language ?? null })),
              formatName: out.format?.format_name ?? 'unknown',
            } satisfies MediaInfo)
          },
        )
      })
    },
  }
}
