// Background workers (role `workers`): the processes that do queued work, such as transcription
// jobs. A new kind of worker is added here and nowhere else.
import type { Services } from './services.ts'
import { transcriptionWorker } from './transcriptionWorker.ts'
import { webhookWorker } from './webhookWorker.ts'

export interface RunningWorker {
  readonly name: string
  stop(): Promise<void>
}

export type WorkerFactory = (s: Services) => RunningWorker

export const WORKERS: WorkerFactory[] = [(s) => transcriptionWorker(s), webhookWorker]

export function startWorkers(s: Services): RunningWorker[] {
  return WORKERS.map((start) => start(s))
}
