// The media-probe port over ffprobe, of the same build as the ffmpeg that decodes
// (adapters/ffmpeg/binaries.ts), opening the file as ffmpeg will (userMediaInput): the file
// protocol and the container demuxers only, so a playlist, manifest or concat list (which would
// name other files) is no media. Its `formatName` is the demuxer ffmpeg is then forced to use.
import { execFile } from 'node:child_process'
import type { MediaInfo, MediaProbe } from '../../ports/mediaProbe.ts'
import { ffprobePath, userMediaInput } from '../ffmpeg/binaries.ts'

export { ffprobePath }

interface ProbeOutput {
  format?: { duration?: string; format_name?: string }
  streams?: { index: number; codec_type?: string; codec_name?: string; sample_rate?: string; channels?: number; duration?: string; tags?: { language?: string } }[]
}

/** `binary` defaults to the fetched build, looked up at the first probe (a process that never probes needs none). */
export function ffprobeMediaProbe(binary?: string, timeoutMs = 30_000): MediaProbe {
  return {
    probe(path) {
      const bin = binary ?? ffprobePath()
      return new Promise((resolve) => {
        execFile(
          bin,
          ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', ...userMediaInput(path)],
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
