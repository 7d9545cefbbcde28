// The transcript of a ready note as the language engines read it (the `NoteReads.ready` port of
// commands/reads.ts), each segment with the name in use of its speaker (readmodels/speakerNames.ts),
// else its letter. Operations that need a ready note answer 409 note_not_ready otherwise (spec
// part 3), also when it has no transcript.
import { DomainError } from '../domain/errors.ts'
import type { SourceTranscript } from '../domain/language/content.ts'
import type { SpeakerNames } from '../domain/speakers/speakers.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { TRANSCRIPTS, type NoteDoc, type TranscriptDoc } from '../projections/notes.ts'
import type { ReadyNote } from '../commands/reads.ts'
import { findNote } from './notes.ts'
import { speakerNamesOf, spokenBy } from './speakerNames.ts'

function sourceOf(note: NoteDoc, t: TranscriptDoc, names: SpeakerNames | undefined): SourceTranscript {
  const seconds = t.durationSeconds ?? note.durationSeconds
  return {
    noteId: note._id,
    title: note.title,
    language: t.language ?? note.language,
    durationMs: seconds === null ? null : Math.round(seconds * 1000),
    segments: [...t.segments]
      .sort((a, b) => a.startMs - b.startMs || a.sequence - b.sequence)
      .map((s) => ({ id: s.id, sequence: s.sequence, startMs: s.startMs, endMs: s.endMs, ...spokenBy(s.speakerLabel, names), text: s.text })),
  }
}

/** The caller's note, ready and transcribed (404 not_found, 409 note_not_ready otherwise). */
export async function readyNote(docs: DocumentStore, accountId: string, noteId: string): Promise<ReadyNote> {
  const note = await findNote(docs, accountId, noteId)
  if (note.status !== 'ready') throw new DomainError('note_not_ready', `The note is ${note.status}; this needs a ready note (poll GET /v1/notes/${noteId}).`)
  const [transcript, names] = await Promise.all([docs.collection<TranscriptDoc>(TRANSCRIPTS).findOne({ _id: noteId, accountId }), speakerNamesOf(docs, accountId, [noteId])])
  if (!transcript) throw new DomainError('note_not_ready', 'The note has no transcript.')
  return { note, source: sourceOf(note, transcript, names.get(noteId)) }
}
