// list_recent_notes: GET /v1/notes, over MCP.
import { NoteList } from '../../contract/notes.ts'
import { ListRecentNotesInput } from '../../contract/mcp.ts'

import { defineTool } from '../tool.ts'
import { transcriptPreviewFor } from '../../domain/transcripts/preview.ts'

export const listRecentNotes = defineTool({
  name: 'list_recent_notes',
  title: 'List recent notes',
  description:
    'Lists notes newest first (20 by default, up to 100), optionally only those in a folder (folderId, or "null" for no folder), with a status, created since an instant, carrying all given tags, or of given origins. ' +
    'Returns a NoteList: `notes`, `nextCursor` (pass it as `cursor` for the next page) and `hasMore`.',
  input: ListRecentNotesInput,
  output: NoteList,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, args) => app.queries.notes.list(caller.accountId, args, transcriptPreviewFor(caller.plan)),
})
