// The voice worker: follows the note streams (its checkpoint in `_checkpoints`, like a
// projection) and does the voice work when there is consent and a speaker-embedding model:
// a note that became ready gets its speakers compared with the profiles; a speaker whose name
// the user confirmed is enrolled into the profile of that name. A failure is logged and the
// worker goes on: voice matching is a suggestion, never a reason to stall.
import type { Projection } from '../projections/runner.ts'
import type { VoiceCommands } from '../commands/voice.ts'
import { noteStream } from '../domain/notes/note.ts'

export function voiceWorkProjection(voice: VoiceCommands, log: (msg: string, err: unknown) => void = (m, e) => console.error(`[voice-worker] ${m}`, e)): Projection {
  return {
    name: 'voice-worker',
    filter: { categories: ['note'], eventTypes: ['NoteReady', 'SpeakerRenamed'] },
    collections: [],
    async handle(events) {
      for (const e of events) {
        const noteId = noteStream.idOf(e.streamName)
        try {
          if (e.type === 'NoteReady') await voice.matchNote(noteId)
          else if (e.type === 'SpeakerRenamed') {
            const d = e.data as { label: string; name: string }
            if (await voice.enroll(noteId, d.label, d.name)) await voice.matchNote(noteId)
          }
        } catch (err) {
          log(`${e.type} of note ${noteId}`, err)
        }
      }
    },
  }
}
