// The transcript of a ready note as the language engines read it (the `NoteReads.ready` port of
// commands/reads.ts). Operations that need a ready note answer 409 note_not_ready otherwise
// (spec part 3), also when it has no transcript.
import { DomainError } from '../domain/errors.ts'
import type { SourceTranscript } from '../domain/language/content.ts'
import { speakerNameMap } from '../domain/speakers/names.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { TRANSCRIPTS, type NoteDoc, type TranscriptDoc } from '../projections/notes.ts'
import type { ReadyNote } from '../commands/reads.ts'
import { findNote } from './notes.ts'

function sourceOf(note: NoteDoc, t: TranscriptDoc): SourceTranscript {
  const speaker = speakerNameMap(t.speakers)
  const seconds = t.durationSeconds ?? note.durationSeconds
  return {
    noteId: note._id,
    title: note.title,
    language: t.language ?? note.language,
    durationMs: seconds === null ? null : Math.round(seconds * 1000),
    segments: [...t.segments]
      .sort((a, b) => a.startMs - b.startMs || a.sequence - b.sequence)
      .map((s) => ({ id: s.id, sequence: s.sequence, startMs: s.startMs, endMs: s.endMs, speaker: s.speakerLabel ? (speaker.get(s.speakerLabel) ?? s.speakerLabel) : null, text: s.text })),
  }
}

/** The caller's note, ready and transcribed (404 not_found, 409 note_not_ready otherwise). */
export async function readyNote(docs: DocumentStore, accountId: string, noteId: string): Promise<ReadyNote> {
  const note = await findNote(docs, accountId, noteId)
  if (note.status !== 'ready') throw new DomainError('note_not_ready', `The note is ${note.status}; this needs a ready note (poll GET /v1/notes/${noteId}).`)
  const transcript = await docs.collection<TranscriptDoc>(TRANSCRIPTS).findOne({ _id: noteId, accountId })
  if (!transcript) throw new DomainError('note_not_ready', 'The note has no transcript.')
  return { note, source: sourceOf(note, transcript) }
}
