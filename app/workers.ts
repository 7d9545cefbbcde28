// Background workers (role `workers`): the processes that do queued work, such as transcription
// jobs. A new kind of worker is added here and nowhere else.
import type { Services } from './services.ts'
import { startTranslationWorker } from '../commands/translationWorker.ts'
import { voiceWorkProjection } from '../commands/voiceWorker.ts'
import { startProjection } from '../projections/runner.ts'
import { transcriptionWorker } from './transcriptionWorker.ts'
import { webhookWorker } from './webhookWorker.ts'
import { startAudioRetention } from '../workers/audioRetention.ts'

export interface RunningWorker {
  readonly name: string
  stop(): Promise<void>
}

export type WorkerFactory = (s: Services) => RunningWorker

/** Translations: queued by POST /transcript/translation, done through the language engine. */
const translations: WorkerFactory = (s) => {
  const f = s.transcriptFeatures
  const worker = startTranslationWorker({ handler: s.handler, docs: s.docs, translator: f.translator, pollMs: s.config.transcripts.translationPollMs })
  f.translationQueue.listener = worker.wake
  return worker
}

/** Voice matching and enrolment; idle without a speaker-embedding model. */
const voice: WorkerFactory = (s) => {
  if (!s.transcriptFeatures.voice.matching.available) return { name: 'voice', stop: async () => {} }
  const p = startProjection(voiceWorkProjection(s.transcriptFeatures.voice), { events: s.events, docs: s.docs })
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

export const WORKERS: WorkerFactory[] = [(s) => transcriptionWorker(s), webhookWorker, translations, voice, audioRetention]

export function startWorkers(s: Services): RunningWorker[] {
  return WORKERS.map((start) => start(s))
}
