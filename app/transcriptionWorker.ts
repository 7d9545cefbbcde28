// The transcription worker's factory (registered in app/workers.ts).
import type { Services } from './services.ts'
import type { RunningWorker } from './workers.ts'
import { startTranscriptionWorker } from '../workers/transcription.ts'

export function transcriptionWorker(s: Services, options: { workerId?: string; log?: (msg: string) => void } = {}): RunningWorker {
  const j = s.config.pipeline.jobs
  return startTranscriptionWorker({
    jobs: s.ingest.jobs,
    credits: s.credits,
    docs: s.docs,
    blobs: s.blobs,
    probe: s.ingest.probe,
    media: s.ingest.media,
    sources: s.ingest.sources,
    engine: s.ingest.engine,
    diarizer: s.ingest.diarizer,
    activity: s.ingest.activity,
    config: { concurrency: j.concurrency, pollMs: j.pollMs, leaseMs: j.leaseMs, progressIntervalMs: j.progressIntervalMs, maxDownloadBytes: s.config.pipeline.downloads.maxBytes, ...(options.workerId ? { workerId: options.workerId } : {}) },
    log: options.log ?? ((m) => console.error(m)),
  })
}
