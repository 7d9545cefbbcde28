// Two deciders on one stream (the note's lifecycle and its transcript side): the command handler
// folds the stream separately for each, so neither sees the other's state, and each ignores the
// other's events.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { embeddedWorld } from './support/world.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'
import { noteTranscriptDecider } from '../domain/notes/noteTranscript.ts'
import { transcriptOf } from './support/transcripts.ts'

t.test('note and transcript deciders share note-<id>', async (t) => {
  const w = await embeddedWorld()
  t.teardown(w.close)
  const noteId = randomUUID()
  const now = new Date().toISOString()
  await w.handler.handle(
    noteStream.of(noteId),
    { type: 'CreateNote', noteId, accountId: 'acc', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'T', language: null, keepAudio: false, upload: null, jobId: null, reservationId: null, now },
    noteDecider,
  )
  await w.events.appendToStream(noteStream.of(noteId), [{ id: randomUUID(), type: 'NoteTranscribed', data: { transcript: transcriptOf([['A', 0, 1000, 'Hola.']]) as never, at: now } }], { expectedRevision: 0 })
  await w.handler.handle(noteStream.of(noteId), { type: 'RenameSpeaker', accountId: 'acc', label: 'A', name: 'Ana', sourceKey: null, now }, noteTranscriptDecider)
  const edited = await w.handler.handle(noteStream.of(noteId), { type: 'EditNote', accountId: 'acc', changes: { title: 'New' }, now }, noteDecider)
  t.match(edited.state, { exists: true, title: 'New', phase: 'queued' }, 'the note decider folds past the transcript events')
  const { state } = await w.handler.load(noteStream.of(noteId), noteTranscriptDecider)
  t.match(state, { exists: true, title: 'New', speakers: { A: { confirmedName: 'Ana' } } }, 'the transcript decider sees the title edit')
})
