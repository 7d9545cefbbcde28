// Fetches and loads the local diarizer's runtime and models by hand: what `npm start` does in the
// background, in the foreground with its progress, for an install that was offline at start or to
// fill a models directory ahead of time (`npm test` runs it for .ci/models). Reads the same
// variables as the service (MODELS_DIR, ASR_PYTHON, DIARIZATION_THREADS); exits 1 when it is
// unavailable.
//
//   npm run --silent diarizer-setup
import { loadConfig } from '../app/config.ts'
import { onnxDiarizer } from '../adapters/onnxruntime/diarizer.ts'

const d = loadConfig().transcripts.diarization
const diarizer = onnxDiarizer({ modelsDir: d.modelsDir, python: d.python, threads: d.threads })
const status = await diarizer.prepare((line) => console.log(line))
await diarizer.close()
console.log(status.state === 'ready' ? status.summary : `not available: ${status.reason}`)
process.exit(status.state === 'ready' ? 0 : 1)
