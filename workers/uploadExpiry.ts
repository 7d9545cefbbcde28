// Abandoned and refused uploads: a note created for an upload that is never PUT and finalized
// (or whose finalize was refused and never retried) would stay `processing` for ever. Once its
// upload URL has expired (created more than UPLOAD_URL_TTL_SECONDS plus a grace for a PUT still
// streaming ago), the note decides `ExpireUpload`: `failed` with `upload_expired`, or the last
// refusal's code (unsupported_media_type, file_too_large, quota_exceeded, invalid_request). The
// `NoteFailed` event is what sends `note.failed` webhooks. Then whatever bytes were left (the
// upload key, a copy a refused finalize recorded) are deleted. Both steps are idempotent, so a
// pass that dies halfway is finished by the next one. A pass that throws is logged and the loop
// goes on (it is supervised by its own timer, never left dead).
import { uploadKey } from '../commands/notes.ts'
import { startPeriodicSweep } from './periodicSweep.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { CommandHandler } from '../commands/handleCommand.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'
import { NOTES, type NoteDoc } from '../projections/notes.ts'

export interface UploadExpiryDeps {
  handler: CommandHandler
  docs: DocumentStore
  blobs: BlobStore
  uploadUrlTtlSeconds: number
  /** Extra time after the URL's expiry for a PUT that started just before it. */
  graceMs: number
  checkEveryMs: number
  clock?: () => Date
  log?: (msg: string) => void
}

const BATCH = 200

export function startUploadExpiry(deps: UploadExpiryDeps) {
  const clock = deps.clock ?? (() => new Date())
  const log = deps.log ?? (() => {})

  /** One pass: fails what expired, deletes its bytes. Returns the notes failed. */
  async function pass(stopped: () => boolean): Promise<number> {
    const now = clock()
    const createdBefore = new Date(now.getTime() - deps.uploadUrlTtlSeconds * 1000 - deps.graceMs).toISOString()
    const due = await deps.docs.collection<NoteDoc>(NOTES).find({ phase: 'awaiting_upload', createdAt: { $lt: createdBefore } }, { limit: BATCH, projection: { accountId: 1 } })
    let expired = 0
    for (const n of due) {
      if (stopped()) break
      const r = await deps.handler.handle(noteStream.of(n._id), { type: 'ExpireUpload', accountId: n.accountId, createdBefore, now: now.toISOString() }, noteDecider)
      if (r.events.length > 0) expired++
      const { state } = await deps.handler.load(noteStream.of(n._id), noteDecider)
      if (!state.exists || state.phase !== 'failed') continue
      for (const key of new Set([uploadKey(n._id), state.received?.blobKey])) if (key) await deps.blobs.delete(key)
    }
    return expired
  }

  return startPeriodicSweep({ name: 'upload-expiry', everyMs: deps.checkEveryMs, firstAfterMs: 5000, pass, describe: (n) => `${n} note(s) failed: their upload URL expired before a successful finalize`, log })
}
