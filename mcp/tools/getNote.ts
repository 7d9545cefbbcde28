// get_note: GET /v1/notes/{id}, over MCP.
import { NoteDetail } from '../../contract/notes.ts'
import { NoteRef } from '../../contract/mcp.ts'
import { transcriptPreviewFor } from '../../domain/transcripts/preview.ts'
import { defineTool } from '../tool.ts'

export const getNote = defineTool({
  name: 'get_note',
  title: 'Get a note',
  description:
    'One note by id with everything known about it: its fields (status, errorCode and errorMessage when failed, progress while processing), `transcript` (fullText, languagesDetected, speakerCount; null until transcribed), `aiNotes` (generated analyses) and `outline` (chapters). ' +
    'On the free plan `fullText` is the same preview get_transcript_segments gives, and `transcript.truncated` / `truncation` say so. ' +
    'A note that is not yours answers not_found.',
  input: NoteRef,
  output: NoteDetail,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, args) => app.queries.notes.detail(caller.accountId, args.noteId, transcriptPreviewFor(caller.plan)),
})
