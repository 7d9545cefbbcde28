// search_notes: GET /v1/notes with `q`, over MCP.
import { NoteList } from '../../contract/notes.ts'
import { SearchNotesInput } from '../../contract/mcp.ts'

import { defineTool } from '../tool.ts'
import { transcriptPreviewFor } from '../../domain/transcripts/preview.ts'

export const searchNotes = defineTool({
  name: 'search_notes',
  title: 'Search notes',
  description:
    'Finds notes whose title, description or transcript contain every word of `q`, newest first. Optional filters: folderId (or "null" for no folder), status, since, tags (all of them), origin (any of them); page with limit and the nextCursor of the previous page. ' +
    'Returns a NoteList: `notes` (each with id, title, status, origin, folderId, tags, durationSeconds, language, createdAt...), `nextCursor`, `hasMore`. Read a note in full with get_note. ' +
    'On the free plan a transcript is searched only as far as its preview goes (what get_transcript_segments shows).',
  input: SearchNotesInput,
  output: NoteList,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, args) => app.queries.notes.list(caller.accountId, args, transcriptPreviewFor(caller.plan)),
})
