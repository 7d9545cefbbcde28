// Background workers (role `workers`): the processes that do queued work, such as transcription
// jobs. A new kind of worker is added here and nowhere else.
import type { Services } from './services.ts'
import { startTranslationWorker } from '../workers/translation.ts'
import { voiceWorkProjection } from '../workers/voice.ts'
import { startProjection } from '../projections/runner.ts'
import { startTranscriptionWorker } from '../workers/transcription.ts'
import { startWebhookWorkers } from '../workers/webhooks.ts'
import { safeWebhookTransport } from '../adapters/net/safeHttp.ts'
import { targetResolver } from '../commands/publicTarget.ts'
import { startAudioRetention } from '../workers/audioRetention.ts'
import { startHoldSweeper } from '../workers/creditHolds.ts'
import { startUploadExpiry } from '../workers/uploadExpiry.ts'

export interface RunningWorker {
  readonly name: string
  stop(): Promise<void>
}

export type WorkerFactory = (services: Services) => RunningWorker

/** Transcription jobs (also started alone by test/support/workerProcess.ts). */
export function transcriptionWorker(services: Services, options: { workerId?: string; log?: (msg: string) => void } = {}): RunningWorker {
  const j = services.config.pipeline.jobs
  return startTranscriptionWorker({
    jobs: services.ingest.jobs,
    credits: services.credits,
    docs: services.docs,
    blobs: services.blobs,
    probe: services.ingest.probe,
    media: services.ingest.media,
    sources: services.ingest.sources,
    engine: services.ingest.engine,
    diarizer: services.ingest.diarizer,
    activity: services.ingest.activity,
    config: { concurrency: j.concurrency, chunkSeconds: j.chunkSeconds, pollMs: j.pollMs, leaseMs: j.leaseMs, progressIntervalMs: j.progressIntervalMs, maxDownloadBytes: services.config.pipeline.downloads.maxBytes, maxDurationSeconds: services.config.maxDurationSeconds, ...(options.workerId ? { workerId: options.workerId } : {}) },
    log: options.log ?? ((m) => console.error(m)),
  })
}

/** Webhook deliveries. */
export function webhookWorker(services: Services): RunningWorker {
  const w = services.config.webhooks
  return startWebhookWorkers({
    events: services.events,
    docs: services.docs,
    handler: services.handler,
    webhooks: services.webhooks,
    speakers: services.queries.transcripts,
    sync: services.sync,
    transport: safeWebhookTransport({ resolveTarget: targetResolver(services.ingest.resolver, w.allowlist), connectTimeoutMs: w.timeoutMs, idleTimeoutMs: w.timeoutMs, totalTimeoutMs: w.timeoutMs }),
    config: { retryDelaysMs: w.retryDelaysMs, timeoutMs: w.timeoutMs, pollMs: w.pollMs },
    log: (m) => console.error(m),
  })
}

/** Translations: queued by POST /transcript/translation, done through the language engine. */
const translations: WorkerFactory = (s) => {
  const f = s.transcriptFeatures
  const worker = startTranslationWorker({ handler: s.handler, docs: s.docs, translator: f.translator, pollMs: s.config.transcripts.translationPollMs })
  f.translationQueue.listener = worker.wake
  return worker
}

/** Voice matching and enrolment; idle without a speaker-embedding model. */
const voice: WorkerFactory = (s) => {
  if (!s.voice.matching.available) return { name: 'voice', stop: async () => {} }
  const p = startProjection(voiceWorkProjection(s.voice), { events: s.events, docs: s.docs })
  return { name: 'voice', stop: () => p.stop() }
}

/** The audio retention window (AUDIO_RETENTION_DAYS). */
const audioRetention: WorkerFactory = (s) =>
  startAudioRetention({
    handler: s.handler,
    docs: s.docs,
    blobs: s.blobs,
    retentionDays: s.config.audioRetention.days,
    checkEveryMs: s.config.audioRetention.checkEveryMs,
    log: (m) => console.log(m),
  })

/** Credit holds whose owner never appeared (CREDIT_HOLD_LEASE_SECONDS). */
const creditHolds: WorkerFactory = (s) =>
  startHoldSweeper({
    handler: s.handler,
    credits: s.credits,
    docs: s.docs,
    leaseMs: s.config.creditHolds.leaseMs,
    checkEveryMs: s.config.creditHolds.sweepEveryMs,
    log: (m) => console.log(m),
  })

/** Uploads never finalized within the upload URL's lifetime (UPLOAD_URL_TTL_SECONDS) fail. */
const uploadExpiry: WorkerFactory = (s) =>
  startUploadExpiry({
    handler: s.handler,
    docs: s.docs,
    blobs: s.blobs,
    uploadUrlTtlSeconds: s.config.uploadUrlTtlSeconds,
    graceMs: s.config.uploadExpiry.graceMs,
    checkEveryMs: s.config.uploadExpiry.checkEveryMs,
    log: (m) => console.log(m),
  })

export const WORKERS: WorkerFactory[] = [(s) => transcriptionWorker(s), webhookWorker, translations, voice, audioRetention, creditHolds, uploadExpiry]

export function startWorkers(services: Services): RunningWorker[] {
  return WORKERS.map((start) => start(services))
}
