// The note decider (CreateNote, RecordUpload, FinalizeUpload, EditNote, ExpireAudio) as given
// events / when command / then events, on the shared DeciderSpecification. The upload side is
// issue 11, item 8: finalize queues exactly the upload it priced; another finalize that recorded
// newer bytes meanwhile makes it refuse, and once the note is queued no upload is recorded any more.
import t from 'tap'
import { noteDecider, type CreateNote, type NoteCommand, type NoteEvent } from '../domain/notes/note.ts'
import { DeciderSpecification } from './support/decider.ts'

const note = DeciderSpecification.for(noteDecider)
const noteId = '3d0c8f70-6a43-4b7e-9d55-1a2b3c4d5e6f'
const accountId = 'acc-1'
const at = '2026-03-01T10:00:00.000Z'
const later = '2026-03-09T10:00:00.000Z'
const createdData = { noteId, accountId, sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'a', language: null, keepAudio: false, upload: { filename: 'a.wav', contentType: 'audio/wav', declaredBytes: null }, jobId: null, reservationId: null } as const
const created: NoteEvent = { type: 'NoteCreated', data: { ...createdData, at } }
const create: CreateNote = { type: 'CreateNote', ...createdData, now: at }
const received = (blobKey: string, durationSeconds: number): NoteEvent => ({ type: 'NoteUploadReceived', data: { blobKey, sizeBytes: 100, contentType: 'audio/wav', sha256: 'x', durationSeconds, at } })
const finalize = (blobKey: string | null): NoteCommand => ({ type: 'FinalizeUpload', accountId, jobId: 'job-1', title: null, minutes: 1, blobKey, now: at })
const finalized: NoteEvent = { type: 'NoteFinalized', data: { jobId: 'job-1', title: null, minutes: 1, at } }
const record = (blobKey: string, who = accountId): NoteCommand => ({ type: 'RecordUpload', accountId: who, blobKey, sizeBytes: 9, contentType: 'audio/wav', sha256: 'y', durationSeconds: 600, now: at })

t.test('create: a new id creates the note; the same id again is a retry; someone else’s id is taken', async (t) => {
  note.given([]).when(create).then(t, [created])
  note.given([created]).when(create).thenNothingHappened(t, 'a retried create changes nothing')
  note.given([created]).when({ ...create, accountId: 'acc-2' }).thenThrows(t, 'conflict', /taken/)
})

t.test('record upload: only while the note awaits its upload, only for its owner', async (t) => {
  note.given([created]).when(record('uploads/n.bound-1')).then(t, [{ type: 'NoteUploadReceived', data: { blobKey: 'uploads/n.bound-1', sizeBytes: 9, contentType: 'audio/wav', sha256: 'y', durationSeconds: 600, at } }])
  note.given([created]).when(record('uploads/n.bound-1', 'acc-2')).thenThrows(t, 'not_found', /belongs to you/)
  note.given([]).when(record('uploads/n.bound-1')).thenThrows(t, 'not_found')
})

t.test('finalize queues the upload it priced, and only that one', async (t) => {
  note.given([created, received('uploads/n.bound-1', 60)]).when(finalize('uploads/n.bound-1')).then(t, [finalized])
  note
    .given([created, received('uploads/n.bound-1', 60), received('uploads/n.bound-2', 600)])
    .when(finalize('uploads/n.bound-1'))
    .thenThrows(t, 'conflict', /newer bytes/)
  note.given([created]).when(finalize(null)).thenThrows(t, 'invalid_state', /No bytes have been uploaded/)
})

t.test('once finalized, no upload is recorded any more', async (t) => {
  const queued = note.given([created, received('uploads/n.bound-1', 60), finalized])
  queued.when(record('uploads/n.bound-2')).thenThrows(t, 'invalid_state', undefined, { current: 'processing' })
  queued.when(finalize('uploads/n.bound-1')).thenThrows(t, 'invalid_state')
})

t.test('edit: only what changed is recorded; nothing changed is nothing; deleted audio cannot be kept', async (t) => {
  const edit = (changes: Extract<NoteCommand, { type: 'EditNote' }>['changes'], who = accountId): NoteCommand => ({ type: 'EditNote', accountId: who, changes, now: later })
  note.given([created]).when(edit({ title: 'b', tags: ['x'], folderId: 'f1' })).then(t, [{ type: 'NoteEdited', data: { title: 'b', tags: ['x'], folderId: 'f1', at: later } }])
  note.given([created]).when(edit({ title: 'a', tags: [] })).thenNothingHappened(t, 'the same title and tags change nothing')
  note.given([created]).when(edit({ title: 'b' }, 'acc-2')).thenThrows(t, 'not_found')
  const audioDeleted: NoteEvent = { type: 'NoteAudioDeleted', data: { blobKey: 'uploads/n.bound-1', reason: 'retention', at: later } }
  note.given([created, received('uploads/n.bound-1', 60), audioDeleted]).when(edit({ keepAudio: true })).thenThrows(t, 'audio_unavailable')
  note.given([created, received('uploads/n.bound-1', 60)]).when(edit({ keepAudio: true })).then(t, [{ type: 'NoteEdited', data: { keepAudio: true, at: later } }])
})

t.test('expire audio: deletes audio stored before the cutoff unless the owner keeps it', async (t) => {
  const expire = (cutoff: string): NoteCommand => ({ type: 'ExpireAudio', accountId, cutoff, now: later })
  const stored = [created, received('uploads/n.bound-1', 60)]
  note.given(stored).when(expire(later)).then(t, [{ type: 'NoteAudioDeleted', data: { blobKey: 'uploads/n.bound-1', reason: `retention window ended (stored ${at})`, at: later } }])
  note.given(stored).when(expire(at)).thenNothingHappened(t, 'audio stored at the cutoff stays')
  note.given([...stored, { type: 'NoteEdited', data: { keepAudio: true, at } }]).when(expire(later)).thenNothingHappened(t, 'kept audio stays')
  note.given([created]).when(expire(later)).thenNothingHappened(t, 'no audio, nothing to delete')
  note.given([...stored, { type: 'NoteAudioDeleted', data: { blobKey: 'uploads/n.bound-1', reason: 'r', at: later } }]).when(expire(later)).thenNothingHappened(t, 'deleted once')
})

t.test('issue 16 item 6: an upload not finalized when its URL expired fails, with the last refusal code or upload_expired', async (t) => {
  const expiredAt = '2026-03-01T11:30:00.000Z'
  const expire: NoteCommand = { type: 'ExpireUpload', accountId, createdBefore: '2026-03-01T11:10:00.000Z', now: expiredAt }
  note.given([created]).when(expire).thenMatches(t, [{ type: 'NoteFailed', data: { errorCode: 'upload_expired', at: expiredAt } }], 'never PUT')
  note.given([created, received('uploads/n.bound-1', 60)]).when(expire).thenMatches(t, [{ type: 'NoteFailed', data: { errorCode: 'upload_expired', message: /never called/ } }], 'PUT, never finalized')
  const refused = note.given([created]).when({ type: 'RefuseUpload', accountId, errorCode: 'unsupported_media_type', message: 'not media', now: at }).events()
  t.match(refused, [{ type: 'NoteUploadRefused', data: { errorCode: 'unsupported_media_type' } }])
  note.given([created, ...refused]).when(expire).thenMatches(t, [{ type: 'NoteFailed', data: { errorCode: 'unsupported_media_type' } }], 'the refusal names the failure')
  note.given([created]).when({ ...expire, createdBefore: '2026-03-01T09:00:00.000Z' } as NoteCommand).thenNothingHappened(t, 'the URL still lives: nothing happens')
  note.given([created, received('uploads/n.bound-1', 60), finalized]).when(expire).thenNothingHappened(t, 'a finalized upload never expires')
  const failed = [created, ...note.given([created]).when(expire).events()]
  note.given(failed).when(expire).thenNothingHappened(t, 'expiring twice changes nothing')
})

t.test('issue 16 item 6: a deleted note is no note: every later command is not_found', async (t) => {
  const deleted = note.given([created]).when({ type: 'DeleteNote', accountId, now: at }).events()
  t.same(deleted, [{ type: 'NoteDeleted', data: { accountId, at } }], 'the tombstone carries no content')
  t.same(note.given([created, ...deleted]).state(), { exists: false })
  note.given([created, ...deleted]).when({ type: 'DeleteNote', accountId, now: at }).thenThrows(t, 'not_found')
  note.given([created]).when({ type: 'DeleteNote', accountId: 'acc-2', now: at }).thenThrows(t, 'not_found', undefined)
  note.given([created, ...deleted]).when({ type: 'EditNote', accountId, changes: { title: 'x' }, now: at }).thenThrows(t, 'not_found')
})
