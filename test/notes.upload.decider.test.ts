// The upload side of the note decider (issue 11, item 8): finalize queues exactly the upload it
// priced. Another finalize that recorded newer bytes meanwhile makes it refuse, and once the note
// is queued no upload can be recorded any more. Pure: given events, when a command, then events.
import t from 'tap'
import { decideNote, evolveNote, type NoteCommand, type NoteEvent, type NoteState } from '../domain/notes/note.ts'
import { DomainError } from '../domain/errors.ts'
import { fold } from '../domain/decider.ts'

const noteId = '3d0c8f70-6a43-4b7e-9d55-1a2b3c4d5e6f'
const accountId = 'acc-1'
const at = '2026-03-01T10:00:00.000Z'
const created: NoteEvent = {
  type: 'NoteCreated',
  data: { noteId, accountId, sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'a', language: null, keepAudio: false, upload: { filename: 'a.wav', contentType: 'audio/wav', declaredBytes: null }, jobId: null, reservationId: null, at },
}
const received = (blobKey: string, durationSeconds: number): NoteEvent => ({ type: 'NoteUploadReceived', data: { blobKey, sizeBytes: 100, contentType: 'audio/wav', sha256: 'x', durationSeconds, at } })
const given = (events: NoteEvent[]): NoteState => fold({ evolve: evolveNote, initialState: () => ({ exists: false }) as NoteState }, events)
const finalize = (blobKey: string | null): NoteCommand => ({ type: 'FinalizeUpload', accountId, jobId: 'job-1', title: null, minutes: 1, blobKey, now: at })
const codeOf = (fn: () => unknown) => {
  try {
    fn()
    return 'no error'
  } catch (e) {
    return e instanceof DomainError ? e.code : String(e)
  }
}

t.test('finalize queues the upload it priced, and only that one', async (t) => {
  const first = given([created, received('uploads/n.bound-1', 60)])
  t.match(decideNote(finalize('uploads/n.bound-1'), first), [{ type: 'NoteFinalized', data: { minutes: 1 } }])
  const newer = given([created, received('uploads/n.bound-1', 60), received('uploads/n.bound-2', 600)])
  t.equal(codeOf(() => decideNote(finalize('uploads/n.bound-1'), newer)), 'conflict', 'newer bytes were recorded after these were priced')
})

t.test('once finalized, no upload is recorded any more', async (t) => {
  const queued = given([created, received('uploads/n.bound-1', 60), ...decideNote(finalize('uploads/n.bound-1'), given([created, received('uploads/n.bound-1', 60)]))])
  const record: NoteCommand = { type: 'RecordUpload', accountId, blobKey: 'uploads/n.bound-2', sizeBytes: 9, contentType: 'audio/wav', sha256: 'y', durationSeconds: 600, now: at }
  t.equal(codeOf(() => decideNote(record, queued)), 'invalid_state')
  t.equal(codeOf(() => decideNote(finalize('uploads/n.bound-1'), queued)), 'invalid_state')
})

t.test('issue 16 item 6: an upload not finalized when its URL expired fails, with the last refusal code or upload_expired', async (t) => {
  const later = '2026-03-01T11:30:00.000Z'
  const expire: NoteCommand = { type: 'ExpireUpload', accountId, createdBefore: '2026-03-01T11:10:00.000Z', now: later }
  t.match(decideNote(expire, given([created])), [{ type: 'NoteFailed', data: { errorCode: 'upload_expired', at: later } }], 'never PUT')
  t.match(decideNote(expire, given([created, received('uploads/n.bound-1', 60)])), [{ type: 'NoteFailed', data: { errorCode: 'upload_expired', message: /never called/ } }], 'PUT, never finalized')
  const refused = decideNote({ type: 'RefuseUpload', accountId, errorCode: 'unsupported_media_type', message: 'not media', now: at }, given([created]))
  t.match(refused, [{ type: 'NoteUploadRefused', data: { errorCode: 'unsupported_media_type' } }])
  t.match(decideNote(expire, given([created, ...refused])), [{ type: 'NoteFailed', data: { errorCode: 'unsupported_media_type' } }], 'the refusal names the failure')
  t.same(decideNote({ ...expire, createdBefore: '2026-03-01T09:00:00.000Z' }, given([created])), [], 'the URL still lives: nothing happens')
  const queued = [created, received('uploads/n.bound-1', 60), ...decideNote(finalize('uploads/n.bound-1'), given([created, received('uploads/n.bound-1', 60)]))]
  t.same(decideNote(expire, given(queued)), [], 'a finalized upload never expires')
  const failed = [created, ...decideNote(expire, given([created]))]
  t.same(decideNote(expire, given(failed)), [], 'expiring twice changes nothing')
})

t.test('issue 16 item 6: a deleted note is no note: every later command is not_found', async (t) => {
  const deleted = decideNote({ type: 'DeleteNote', accountId, now: at }, given([created]))
  t.same(deleted, [{ type: 'NoteDeleted', data: { accountId, at } }], 'the tombstone carries no content')
  t.same(given([created, ...deleted]), { exists: false })
  t.equal(codeOf(() => decideNote({ type: 'DeleteNote', accountId, now: at }, given([created, ...deleted]))), 'not_found')
  t.equal(codeOf(() => decideNote({ type: 'DeleteNote', accountId: 'acc-2', now: at }, given([created]))), 'not_found', 'another account')
  t.equal(codeOf(() => decideNote({ type: 'EditNote', accountId, changes: { title: 'x' }, now: at }, given([created, ...deleted]))), 'not_found')
})
