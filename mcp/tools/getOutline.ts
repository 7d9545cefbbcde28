// get_outline: GET /v1/notes/{id}/outline without `generate`, over MCP: reads, never generates
// (generate_outline does, for credits).
import { Outline } from '../../contract/analysis.ts'
import { NoteRef } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const getOutline = defineTool({
  name: 'get_outline',
  title: 'Get the outline of a note',
  description:
    'The note’s chapters (`outline`: startMs, endMs, headline; they cover the audio from 0 to its end without gaps), `generated` (whether an outline exists) and `attemptedAt` (the last generation attempt, or null). ' +
    'Only reads: an empty outline stays empty (make one with generate_outline). A note that is not ready answers note_not_ready.',
  input: NoteRef,
  output: Outline,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, { noteId }) => app.analysis.outline(caller, noteId, false),
})
