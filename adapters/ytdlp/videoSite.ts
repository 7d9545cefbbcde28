// Video-sharing pages through the `yt-dlp` program, found at run time (YTDLP_PATH, or `yt-dlp`
// on PATH); it is not an npm package, so a server without it fails video-site notes with
// `videosite_unavailable` instead of pretending.
//
// yt-dlp only reads the page (`--dump-single-json`: no download): it names the best audio (or
// the whole video when there is no audio-only format) over plain http(s), the site's own
// subtitles, and the page's metadata. Every connection it makes for that goes through a
// policy proxy on loopback (adapters/net/policyProxy.ts), which checks each one, redirects
// included, against the import address policy and connects to the address it checked. The
// media and subtitle files are then fetched by our own HTTP fetcher (adapters/net/safeHttp.ts),
// which checks and pins every hop the same way and caps the size. So nothing yt-dlp is told by a
// page (a redirect to 127.0.0.1, an <audio src> on an internal address) reaches an internal host.
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { VideoSite, VideoSiteMedia } from '../../ports/videoSite.ts'
import type { TargetResolver } from '../../ports/hostResolver.ts'
import type { HttpFetcher } from '../../ports/httpFetcher.ts'
import { PipelineFailure, isPipelineFailure } from '../../ports/pipelineFailure.ts'
import { startPolicyProxy } from '../net/policyProxy.ts'

/** yt-dlp's answer for a YouTube page is a few hundred KB; more than this is not an answer. */
const MAX_JSON_BYTES = 32 * 1024 * 1024
const MAX_SUBTITLE_BYTES = 5 * 1024 * 1024

function run(binary: string, args: string[], o: { signal?: AbortSignal; timeoutMs: number }): Promise<{ code: number | null; stdout: string; stderr: string; missing: boolean }> {
  return new Promise((resolve) => {
    const out: Buffer[] = []
    let outBytes = 0
    let stderr = ''
    let child
    try {
      child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: withoutProxyVariables(process.env), killSignal: 'SIGKILL', ...(o.signal ? { signal: o.signal } : {}) })
    } catch {
      return resolve({ code: null, stdout: '', stderr, missing: true })
    }
    // Our own timer (spawn's `timeout` keeps a timer alive when the program is missing).
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs)
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length
      if (outBytes > MAX_JSON_BYTES) child.kill('SIGKILL')
      else out.push(d)
    })
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve({ code: null, stdout: '', stderr: err.message, missing: err.code === 'ENOENT' || err.code === 'EACCES' })
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr, missing: false })
    })
  })
}

/** The environment without proxy settings (NO_PROXY above all): yt-dlp's only way out is the policy proxy. */
const withoutProxyVariables = (env: NodeJS.ProcessEnv) => Object.fromEntries(Object.entries(env).filter(([k]) => !/^(https?|all|no|ftp)_proxy$/i.test(k)))

const day = (d: unknown) => (typeof d === 'string' && /^\d{8}$/.test(d) ? `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T00:00:00.000Z` : null)
const str = (v: unknown) => (typeof v === 'string' ? v : null)

/** The headers of yt-dlp's answer a media host may need (some refuse a request without them). */
function mediaHeaders(h: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (!h || typeof h !== 'object') return out
  for (const [k, v] of Object.entries(h as Record<string, unknown>)) {
    if (typeof v === 'string' && ['user-agent', 'referer', 'origin', 'accept-language'].includes(k.toLowerCase())) out[k.toLowerCase()] = v
  }
  return out
}

// Single files over http(s) only: a fragmented format (HLS, DASH) would need yt-dlp or ffmpeg
// to fetch the fragments, outside the fetcher that checks every address.
const FORMAT = 'ba[protocol=https]/ba[protocol=http]/b[protocol=https]/b[protocol=http]'

export interface YtDlpOptions {
  binary?: string
  /** The import address policy (commands/publicTarget.ts): applied by the proxy to yt-dlp's connections. */
  resolveTarget: TargetResolver
  /** Fetches the media and subtitles yt-dlp names, under the same policy. */
  http: HttpFetcher
  timeoutMs?: number
  connectTimeoutMs?: number
}

export function ytDlpVideoSite(o: YtDlpOptions): VideoSite {
  const binary = o.binary || 'yt-dlp'
  const timeoutMs = o.timeoutMs ?? 10 * 60_000
  return {
    async available() {
      const r = await run(binary, ['--version'], { timeoutMs: 15_000 })
      return r.code === 0 ? { version: r.stdout.trim() } : null
    },
    async fetch(pageUrl, workDir, { maxBytes, signal }): Promise<VideoSiteMedia> {
      const proxy = await startPolicyProxy({ resolveTarget: o.resolveTarget, connectTimeoutMs: o.connectTimeoutMs ?? 15_000 })
      let r: Awaited<ReturnType<typeof run>>
      try {
        const args = [
          '--ignore-config',
          '--no-cache-dir',
          '--no-playlist',
          '--no-warnings',
          '--proxy',
          proxy.url,
          '--dump-single-json',
          '-f',
          FORMAT,
          '--write-subs',
          '--sub-langs',
          'all,-live_chat',
          '--sub-format',
          'vtt',
          '--',
          pageUrl,
        ]
        r = await run(binary, args, { timeoutMs, ...(signal ? { signal } : {}) })
      } finally {
        await proxy.close()
      }
      if (r.missing) throw new PipelineFailure('videosite_unavailable', 'Video-site links need yt-dlp, which is not installed on this server.')
      if (r.code !== 0) {
        if (proxy.refused.length > 0) throw new PipelineFailure('source_blocked', `The video page leads to an address that is refused (${proxy.refused[0]}); only public addresses can be called.`)
        throw new PipelineFailure('videosite_failed', `yt-dlp could not read the video page: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`)
      }
      let meta: Record<string, unknown>
      try {
        meta = JSON.parse(r.stdout) as Record<string, unknown>
      } catch {
        throw new PipelineFailure('videosite_failed', 'yt-dlp gave no readable description of the video.')
      }
      const mediaUrl = str(meta.url)
      if (!mediaUrl || !/^https?:$/.test(safeProtocol(mediaUrl))) throw new PipelineFailure('videosite_failed', 'The video page offers no single audio or video file over http(s) (streamed formats are not read).')
      const ext = /^[a-z0-9]{1,8}$/i.test(str(meta.ext) ?? '') ? (meta.ext as string) : 'media'
      const mediaPath = join(workDir, `media.${ext}`)
      await o.http.download(mediaUrl, mediaPath, { maxBytes, headers: mediaHeaders(meta.http_headers), ...(signal ? { signal } : {}) })
      return {
        mediaPath,
        subtitlePaths: await subtitles(o.http, meta.requested_subtitles, workDir, signal),
        title: str(meta.title),
        description: str(meta.description),
        durationSeconds: typeof meta.duration === 'number' ? meta.duration : null,
        recordedAt: day(meta.upload_date),
      }
    },
  }
}

function safeProtocol(url: string): string {
  try {
    return new URL(url).protocol
  } catch {
    return ''
  }
}

/** The site's WebVTT subtitles, each fetched under the address policy; one that fails is skipped. */
async function subtitles(http: HttpFetcher, requested: unknown, workDir: string, signal: AbortSignal | undefined): Promise<string[]> {
  if (!requested || typeof requested !== 'object') return []
  const paths: string[] = []
  for (const [lang, sub] of Object.entries(requested as Record<string, { url?: unknown; ext?: unknown }>)) {
    if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]+)*$/.test(lang) || sub?.ext !== 'vtt' || typeof sub.url !== 'string') continue
    try {
      const { body } = await http.text(sub.url, { maxBytes: MAX_SUBTITLE_BYTES, accept: 'text/vtt, */*;q=0.5', ...(signal ? { signal } : {}) })
      const path = join(workDir, `media.${lang}.vtt`)
      await writeFile(path, body)
      paths.push(path)
    } catch (err) {
      // A refused or broken subtitle file is not a failed note: the audio is transcribed instead.
      if (signal?.aborted || !isPipelineFailure(err)) throw err
    }
  }
  return paths
}
