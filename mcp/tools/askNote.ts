// ask_note: POST /v1/notes/{id}/ask over MCP, or POST /v1/ask when no note is named: the same
// commands, so the same 10-credit charge and the same refund when the model does not answer.
import { AskNoteInput, AskNoteResult } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const askNote = defineTool({
  name: 'ask_note',
  title: 'Ask about a note (or the whole library)',
  description:
    'Answers `question` from the transcript of the note `noteId` (which must be ready), quoting the audio as [mm:ss]; without `noteId`, from every note of the library, quoting [Note title | mm:ss]. ' +
    'Returns `question`, `answer`, `citedSegments` (the transcript segment ids the answer quotes), `sessionId` (pass it back to ask a follow-up that sees the earlier turns), and `noteId` (one note) or `citedNotes` (library: noteId and title of each note quoted). ' +
    'The credits are refunded when the model does not answer (chat_failed).',
  input: AskNoteInput,
  output: AskNoteResult,
  readOnly: false,
  handle: ({ app, caller }, { noteId, question, sessionId }) =>
    noteId ? app.ask.askNote(caller, noteId, { question, sessionId }) : app.ask.askLibrary(caller, { question, sessionId }),
})
