// Waiting for a note to leave `processing` (MCP wait_for_transcription): polls the notes read
// model at a short interval, reports every change of stage and a heartbeat, and gives up at the
// deadline. The caller owns the deadline; nothing here waits without bound.
import type { DocumentStore } from '../ports/documentStore.ts'
import type { Note } from '../contract/notes.ts'
import { findNote, toNote } from './notes.ts'

export interface WaitOptions {
  timeoutMs: number
  signal?: AbortSignal
  pollMs?: number
  heartbeatMs?: number
  /** Called at the start, on every change of status, stage or percent, and at each heartbeat. */
  onTick?(note: Note, elapsedMs: number): Promise<void> | void
}

export interface WaitResult {
  note: Note
  finished: boolean
  waitedMs: number
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })

const fingerprint = (n: Note) => `${n.status}|${n.progress?.stage ?? ''}|${n.progress?.percent ?? ''}|${n.progress?.attempt ?? ''}`

export async function waitForNote(docs: DocumentStore, accountId: string, noteId: string, options: WaitOptions): Promise<WaitResult> {
  const started = Date.now()
  const pollMs = options.pollMs ?? 200
  const heartbeatMs = options.heartbeatMs ?? 5000
  let last = ''
  let lastTick = 0
  for (;;) {
    // Throws not_found for a note of someone else, on the first look as on any later one.
    const note = toNote(await findNote(docs, accountId, noteId))
    const elapsed = Date.now() - started
    const finished = note.status !== 'processing'
    const print = fingerprint(note)
    if (print !== last || elapsed - lastTick >= heartbeatMs || finished) {
      last = print
      lastTick = elapsed
      await options.onTick?.(note, elapsed)
    }
    if (finished || elapsed >= options.timeoutMs || options.signal?.aborted) return { note, finished, waitedMs: elapsed }
    await sleep(Math.min(pollMs, options.timeoutMs - elapsed), options.signal)
  }
}
