// The media-tool port over ffmpeg (the build of adapters/ffmpeg/binaries.ts, the one ffprobe is
// from). User media is opened with userMediaInput: the file protocol only, the container
// demuxers only, the probe's demuxer forced. The toSpeechWav answer is measured on the decoded
// samples, so a file whose header lies about its length is measured for what it holds.
import { spawn } from 'node:child_process'
import { open } from 'node:fs/promises'
import type { MediaTool } from '../../ports/mediaTool.ts'
import { pcm16MonoLayout } from '../../domain/audio/pcm.ts'
import { ffmpegPath, userMediaInput } from './binaries.ts'

export { ffmpegPath }

export class FfmpegError extends Error {
  override readonly name = 'FfmpegError'
}

const TIME = /time=(\d+):(\d+):(\d+(?:\.\d+)?)/

function run(binary: string, args: string[], o: { signal?: AbortSignal; onTime?: (seconds: number) => void; timeoutMs: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['-hide_banner', '-nostdin', '-y', ...args], { stdio: ['ignore', 'ignore', 'pipe'], signal: o.signal, killSignal: 'SIGKILL' })
    // Our own timer: spawn's `timeout` would outlive a binary that failed to start.
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs)
    let tail = ''
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (s: string) => {
      tail = (tail + s).slice(-4000)
      const m = TIME.exec(s)
      if (m && o.onTime) o.onTime(Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]))
    })
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new FfmpegError(`ffmpeg ${signal ? `killed by ${signal}` : `exited with ${code}`}: ${tail.trim().split('\n').slice(-3).join(' | ')}`))
    })
  })
}

export function ffmpegMediaTool(binary = ffmpegPath(), timeoutMs = 60 * 60_000): MediaTool {
  return {
    async toSpeechWav(input, output, options = {}) {
      const limit = options.maxSeconds ? ['-t', options.maxSeconds.toFixed(3)] : []
      await run(binary, [...userMediaInput(input, options.format), '-map', '0:a:0', '-vn', '-sn', '-dn', ...limit, '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav', output], {
        timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onTime: options.onProgress } : {}),
      })
      return { durationSeconds: await wavSeconds(output) }
    },
    extractSubtitles(input, streamIndex, output, options = {}) {
      return run(binary, [...userMediaInput(input, options.format), '-map', `0:${streamIndex}`, '-c:s', 'webvtt', '-f', 'webvtt', output], { timeoutMs, ...(options.signal ? { signal: options.signal } : {}) })
    },
    encodeSlice(input, output, slice, options = {}) {
      return run(
        binary,
        ['-ss', slice.startSeconds.toFixed(3), '-t', slice.seconds.toFixed(3), ...userMediaInput(input, options.format), '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'libmp3lame', '-b:a', `${slice.kbps}k`, '-f', 'mp3', output],
        { timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
      )
    },
  }
}

/** The length of a 16-bit mono WAV that ffmpeg wrote, from its sample count. */
async function wavSeconds(path: string): Promise<number> {
  const handle = await open(path, 'r')
  try {
    const head = Buffer.alloc(4096)
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    const layout = pcm16MonoLayout(head.subarray(0, bytesRead))
    if (!layout) throw new FfmpegError('ffmpeg wrote no 16-bit mono WAV')
    const { size } = await handle.stat()
    return Math.max(0, size - layout.dataOffset) / 2 / layout.sampleRate
  } finally {
    await handle.close()
  }
}
