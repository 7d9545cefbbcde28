// wait_for_transcription: waits (bounded) for a note to be ready or failed, sending progress
// notifications meanwhile, then returns where the note is.
import { TranscriptionWait, WaitForTranscriptionInput } from '../../contract/mcp.ts'
import type { Note } from '../../contract/notes.ts'
import { noteFailureAdvice } from '../../domain/advice.ts'

import { defineTool } from '../tool.ts'

const describe = (n: Note) =>
  n.status === 'processing'
    ? `processing${n.progress ? `: ${n.progress.stage}${n.progress.percent !== null ? ` ${Math.round(n.progress.percent)}%` : ''}${n.progress.attempt > 1 ? ` (attempt ${n.progress.attempt})` : ''}` : ''}`
    : n.status === 'failed'
      ? `failed (${n.errorCode ?? 'unknown error'})${n.errorMessage ? `: ${n.errorMessage}` : ''}`
      : 'ready'

export const waitForTranscription = defineTool({
  name: 'wait_for_transcription',
  title: 'Wait for a transcription',
  description:
    'Waits until the note is ready or failed, at most timeoutSeconds (default 45, at most 120), sending progress notifications (progress = seconds waited, total = timeoutSeconds, message = the stage) when the request carries a progressToken. ' +
    'Returns `noteId`, `status`, `errorCode` and `errorMessage` (what went wrong and what fixes it, when failed), `progress`, `finished` (false when the time ran out first: call again), `waitedMs`, the `note`, and `next`.',
  input: WaitForTranscriptionInput,
  output: TranscriptionWait,
  readOnly: true,
  idempotent: true,
  async handle({ app, caller, signal, progress }, { noteId, timeoutSeconds }) {
    let sent = -1
    const r = await app.queries.notes.waitFor(caller.accountId, noteId, {
      timeoutMs: timeoutSeconds * 1000,
      signal,
      async onTick(note, elapsedMs) {
        // Strictly growing, as the MCP progress rule asks, even for two ticks in the same millisecond.
        sent = Math.max(sent + 0.001, Math.round(elapsedMs) / 1000)
        await progress({ progress: sent, total: timeoutSeconds, message: describe(note) })
      },
    })
    const { note } = r
    return {
      noteId,
      status: note.status,
      errorCode: note.errorCode,
      errorMessage: note.errorMessage,
      progress: note.progress,
      finished: r.finished,
      waitedMs: r.waitedMs,
      note,
      next:
        note.status === 'ready'
          ? 'The transcript is ready: read it with get_note.'
          : note.status === 'failed'
            ? `The transcription failed (${note.errorCode ?? 'unknown error'}${note.errorMessage ? `: ${note.errorMessage}` : ''}). ${noteFailureAdvice(note.errorCode).next}`
            : 'Still processing: call wait_for_transcription again.',
    }
  },
})
