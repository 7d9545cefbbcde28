// Video-sharing pages through the `yt-dlp` program, found at run time (YTDLP_PATH, or `yt-dlp`
// on PATH); it is not an npm package, so a server without it fails video-site notes with
// `videosite_unavailable` instead of pretending. It downloads the best audio (or the whole
// video when there is no audio-only format), the site's own subtitles as WebVTT, and the page's
// metadata. yt-dlp opens its own connections: the page host was checked at create time, but
// the addresses of the media hosts it is redirected to are not pinned like our own downloads.
import { spawn } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { VideoSite, VideoSiteMedia } from '../../ports/videoSite.ts'
import { PipelineFailure } from '../../ports/pipelineFailure.ts'

function run(binary: string, args: string[], o: { signal?: AbortSignal; timeoutMs: number }): Promise<{ code: number | null; stdout: string; stderr: string; missing: boolean }> {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    let child
    try {
      child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], killSignal: 'SIGKILL', ...(o.signal ? { signal: o.signal } : {}) })
    } catch {
      return resolve({ code: null, stdout, stderr, missing: true })
    }
    // Our own timer (spawn's `timeout` keeps a timer alive when the program is missing).
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs)
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-20_000)))
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve({ code: null, stdout, stderr: err.message, missing: err.code === 'ENOENT' || err.code === 'EACCES' })
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, missing: false })
    })
  })
}

const day = (d: unknown) => (typeof d === 'string' && /^\d{8}$/.test(d) ? `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T00:00:00.000Z` : null)

export function ytDlpVideoSite(o: { binary?: string; ffmpegPath?: string; timeoutMs?: number } = {}): VideoSite {
  const binary = o.binary || 'yt-dlp'
  const timeoutMs = o.timeoutMs ?? 60 * 60_000
  return {
    async available() {
      const r = await run(binary, ['--version'], { timeoutMs: 15_000 })
      return r.code === 0 ? { version: r.stdout.trim() } : null
    },
    async fetch(pageUrl, workDir, { maxBytes, signal }): Promise<VideoSiteMedia> {
      const args = [
        '--no-playlist',
        '--no-progress',
        '--no-warnings',
        '--no-mtime',
        '-f',
        'bestaudio/best',
        '--max-filesize',
        String(maxBytes),
        '--write-info-json',
        '--write-subs',
        '--sub-langs',
        'all,-live_chat',
        '--sub-format',
        'vtt',
        ...(o.ffmpegPath ? ['--ffmpeg-location', o.ffmpegPath] : []),
        '-o',
        join(workDir, 'media.%(ext)s'),
        '--',
        pageUrl,
      ]
      const r = await run(binary, args, { timeoutMs, ...(signal ? { signal } : {}) })
      if (r.missing) throw new PipelineFailure('videosite_unavailable', 'Video-site links need yt-dlp, which is not installed on this server.')
      if (r.code !== 0) throw new PipelineFailure('videosite_failed', `yt-dlp could not fetch the video: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`)
      const files = await readdir(workDir)
      const info = files.find((f) => f.endsWith('.info.json'))
      const media = files.find((f) => f.startsWith('media.') && !f.endsWith('.json') && !f.endsWith('.vtt') && !f.endsWith('.part'))
      if (!media) throw new PipelineFailure('source_too_large', `yt-dlp downloaded nothing (the video may be larger than ${maxBytes} bytes).`)
      const meta = info ? (JSON.parse(await readFile(join(workDir, info), 'utf8')) as Record<string, unknown>) : {}
      return {
        mediaPath: join(workDir, media),
        subtitlePaths: files.filter((f) => f.startsWith('media.') && f.endsWith('.vtt')).map((f) => join(workDir, f)),
        title: typeof meta.title === 'string' ? meta.title : null,
        description: typeof meta.description === 'string' ? meta.description : null,
        durationSeconds: typeof meta.duration === 'number' ? meta.duration : null,
        recordedAt: day(meta.upload_date),
      }
    },
  }
}
