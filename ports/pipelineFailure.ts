// A failure of the transcription pipeline with the note's `errorCode` (see
// domain/notes/transcriptionJob.ts NOTE_ERROR_CODES). Adapters throw it so the worker can tell a
// permanent failure (the note fails now) from a passing one (retried with backoff).
export class PipelineFailure extends Error {
  override readonly name = 'PipelineFailure'
  constructor(
    readonly errorCode: string,
    message: string,
    readonly retriable: boolean = false,
  ) {
    super(message)
  }
}

export const isPipelineFailure = (e: unknown): e is PipelineFailure => e instanceof PipelineFailure
