// The media-tool port over ffmpeg. The binary comes from the npm registry:
// @ffmpeg-installer/ffmpeg ships a static Linux/macOS/Windows build inside a platform package
// (libmp3lame, aac, opus, pcm, webvtt, mov_text and subrip included), so `npm ci` installs it
// with no other download and no apt step. FFMPEG_PATH overrides it (e.g. a system ffmpeg). The
// only file that imports the package.
import { spawn } from 'node:child_process'
import { accessSync, chmodSync, constants } from 'node:fs'
import { createRequire } from 'node:module'
import type { MediaTool } from '../../ports/mediaTool.ts'

const require = createRequire(import.meta.url)

export function ffmpegPath(): string {
  if (process.env.FFMPEG_PATH) return process.env.FFMPEG_PATH
  const path = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path
  try {
    accessSync(path, constants.X_OK)
  } catch {
    // The package's postinstall (chmod) did not run, e.g. under --ignore-scripts.
    chmodSync(path, 0o755)
  }
  return path
}

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
    toSpeechWav(input, output, options = {}) {
      return run(binary, ['-i', input, '-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav', output], {
        timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onTime: options.onProgress } : {}),
      })
    },
    extractSubtitles(input, streamIndex, output, options = {}) {
      return run(binary, ['-i', input, '-map', `0:${streamIndex}`, '-c:s', 'webvtt', '-f', 'webvtt', output], { timeoutMs, ...(options.signal ? { signal: options.signal } : {}) })
    },
    encodeSlice(input, output, slice, options = {}) {
      return run(
        binary,
        ['-ss', slice.startSeconds.toFixed(3), '-t', slice.seconds.toFixed(3), '-i', input, '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'libmp3lame', '-b:a', `${slice.kbps}k`, '-f', 'mp3', output],
        { timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
      )
    },
  }
}
