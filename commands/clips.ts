// Audio clips: an MP3 of a time range of a note's audio, cut with the media tool (ffmpeg). The
// audio is the upload's bytes or the import's kept media; 5 credits per clip, refunded by an
// event when the cut fails.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DomainError } from '../domain/errors.ts'
import { PRICES } from '../domain/credits/prices.ts'
import { audioBlobOf, noteDecider, noteStream, ownedNote } from '../domain/notes/note.ts'
import { noteTranscriptDecider } from '../domain/notes/noteTranscript.ts'
import { cut, transcriptPreviewFor } from '../domain/transcripts/preview.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { MediaTool } from '../ports/mediaTool.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'
import type { Caller } from './context.ts'

/** Longest clip: enough for a quote or an exchange, small enough to travel inline (about 2.4 MB). */
export const MAX_CLIP_MS = 5 * 60_000
const CLIP_KBPS = 64

export interface Clip {
  noteId: string
  startMs: number
  endMs: number
  durationMs: number
  mimeType: 'audio/mpeg'
  sizeBytes: number
  /** The MP3 bytes. */
  data: Buffer
}

export class ClipCommands {
  constructor(
    private readonly deps: { handler: CommandHandler; credits: CreditCommands; blobs: BlobStore; media: MediaTool },
  ) {}

  /** On the free plan the audio past the transcript's preview is no more reachable than its text. */
  private async withinPreview(caller: Caller, r: { noteId: string; endMs: number }) {
    const preview = transcriptPreviewFor(caller.plan)
    if (!preview) return
    const { state } = await this.deps.handler.load(noteStream.of(r.noteId), noteTranscriptDecider)
    const segments = state.exists && state.transcript ? state.transcript.segments : []
    const { shown, truncated } = cut(segments, preview)
    if (!truncated) return
    const untilMs = shown.filter((x, i) => x.text === segments[i]!.text).reduce((m, x) => Math.max(m, x.endMs), 0)
    if (r.endMs > untilMs) {
      throw new DomainError('invalid_request', `On the free plan clips are cut from the audio the transcript preview covers (${preview.rule}): up to ${untilMs} ms. ${preview.getTheRest}`, { maxEndMs: untilMs })
    }
  }

  async extract(caller: Caller, r: { noteId: string; startMs: number; endMs: number }): Promise<Clip> {
    const { state } = await this.deps.handler.load(noteStream.of(r.noteId), noteDecider)
    const note = ownedNote(state, caller.accountId)
    if (note.phase !== 'ready') throw new DomainError('note_not_ready', 'Clips are cut from ready notes; this one is not ready yet.')
    await this.withinPreview(caller, r)
    const blobKey = audioBlobOf(note)
    if (!blobKey) {
      throw new DomainError(
        'audio_unavailable',
        note.audioDeletedAt
          ? `The audio of this note was deleted at the end of its retention window (${note.audioDeletedAt}); the transcript stays.`
          : 'This note keeps no audio: its transcript was published by the source and the audio was never downloaded, or the storage quota was full.',
      )
    }
    const totalMs = note.durationSeconds !== null ? Math.round(note.durationSeconds * 1000) : null
    if (!(r.endMs > r.startMs)) throw new DomainError('invalid_request', 'endMs must be after startMs.')
    if (totalMs !== null && r.startMs >= totalMs) throw new DomainError('invalid_request', `startMs is past the end of the audio (${totalMs} ms).`)
    const endMs = totalMs !== null ? Math.min(r.endMs, totalMs) : r.endMs
    if (endMs - r.startMs > MAX_CLIP_MS) throw new DomainError('invalid_request', `A clip is at most ${MAX_CLIP_MS / 1000} s long.`)
    return this.deps.credits.chargedOperation(caller.accountId, { operation: PRICES.clip.operation, cost: PRICES.clip.credits, noteId: note.noteId, requestId: caller.requestId }, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'clip-'))
      try {
        const out = join(dir, 'clip.mp3')
        await this.deps.blobs.withLocalFile(blobKey, (path) =>
          this.deps.media.encodeSlice(path, out, { startSeconds: r.startMs / 1000, seconds: (endMs - r.startMs) / 1000, kbps: CLIP_KBPS }),
        )
        const data = await readFile(out)
        if (data.length === 0) throw new Error('the cut produced no audio')
        return { noteId: note.noteId, startMs: r.startMs, endMs, durationMs: endMs - r.startMs, mimeType: 'audio/mpeg', sizeBytes: data.length, data }
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    })
  }
}
