// The audio retention window: audio (an upload's bytes, an import's kept media) older than the
// window is deleted unless its owner asked to keep it (`keepAudio`); the transcript, analyses and
// everything else stay. The decision is the note's (ExpireAudio, which re-checks `keepAudio` on
// the stream, so a keep that arrives meanwhile wins); then the blob is deleted and its storage
// freed. Both are idempotent, so notes deleted recently are swept again in case a run died
// between the event and the deletion.
import { uploadKey } from '../commands/notes.ts'
import { startPeriodicSweep } from './periodicSweep.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { CommandHandler } from '../commands/handleCommand.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'
import { usageDecider, usageStream } from '../domain/usage/usage.ts'
import { NOTES, type NoteDoc } from '../projections/notes.ts'

export interface AudioRetentionDeps {
  handler: CommandHandler
  docs: DocumentStore
  blobs: BlobStore
  retentionDays: number
  checkEveryMs: number
  clock?: () => Date
  log?: (msg: string) => void
}

const DAY = 24 * 3600 * 1000
const BATCH = 200

export function startAudioRetention(deps: AudioRetentionDeps) {
  const clock = deps.clock ?? (() => new Date())
  const log = deps.log ?? (() => {})

  /** One pass: expires what is due, then finishes deletions of the last day. Returns the notes expired. */
  async function pass(stopped: () => boolean): Promise<number> {
    const now = clock()
    const cutoff = new Date(now.getTime() - deps.retentionDays * DAY).toISOString()
    const notes = deps.docs.collection<NoteDoc>(NOTES)
    const due = await notes.find({ audioDeletedAt: null, keepAudio: false, audioStoredAt: { $lt: cutoff } }, { limit: BATCH, projection: { accountId: 1 } })
    let expired = 0
    for (const n of due) {
      if (stopped()) break
      const r = await deps.handler.handle(noteStream.of(n._id), { type: 'ExpireAudio', accountId: n.accountId, cutoff, now: now.toISOString() }, noteDecider)
      if (r.events.length > 0) expired++
      await purge(n._id, n.accountId)
    }
    const recent = await notes.find({ audioDeletedAt: { $gte: new Date(now.getTime() - DAY).toISOString() } }, { limit: BATCH, projection: { accountId: 1 } })
    for (const n of recent) if (!stopped()) await purge(n._id, n.accountId)
    return expired
  }

  async function purge(noteId: string, accountId: string) {
    const { state } = await deps.handler.load(noteStream.of(noteId), noteDecider)
    if (!state.exists || !state.audioDeletedAt) return
    // The upload key too: a presigned S3 PUT cannot be revoked, so one made after finalize may have left bytes there.
    for (const key of new Set([state.audio?.blobKey, state.received?.blobKey, state.sourceType === 'upload' ? uploadKey(noteId) : undefined])) if (key) await deps.blobs.delete(key)
    await deps.handler.handle(usageStream.of(accountId), { type: 'FreeStorage', noteId, reason: 'audio retention window ended', now: clock().toISOString() }, usageDecider)
  }

  return startPeriodicSweep({ name: 'audio-retention', everyMs: deps.checkEveryMs, firstAfterMs: 5000, pass, describe: (n) => `deleted the audio of ${n} note(s) past ${deps.retentionDays} days`, log })
}
