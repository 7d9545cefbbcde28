// Fetches and loads the default local speech engine by hand: what `npm start` does in the
// background, in the foreground with its progress, for an install that was offline at start or
// to fill a models directory ahead of time. Reads the same variables as the service (MODELS_DIR,
// WHISPER_MODEL, ASR_PYTHON, ...); prints the engine's summary and exits 1 when it is unavailable.
//
//   npm run --silent speech-setup
import { loadConfig } from '../app/config.ts'
import { createEngine } from '../app/pipeline.ts'
import type { MediaTool } from '../ports/mediaTool.ts'

const config = loadConfig()
const noMedia = {} as MediaTool
const engine = createEngine(config, noMedia)
if (!engine.prepare) {
  console.log(`${engine.engine} (${engine.provider}) needs nothing fetched`)
  process.exit(0)
}
const status = await engine.prepare((line) => console.log(line))
await engine.close?.()
console.log(status.state === 'ready' ? status.summary : `not available: ${status.reason}`)
process.exit(status.state === 'ready' ? 0 : 1)
