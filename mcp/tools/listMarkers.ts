// list_markers: GET /v1/notes/{id}/markers (extension), over MCP: the outline's chapters as
// markers.
import { MarkerList } from '../../contract/highlights.ts'
import { NoteRef } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const listMarkers = defineTool({
  name: 'list_markers',
  title: 'List the chapter markers of a note',
  description:
    'The chapters of the note’s outline as markers, in order: `startMs`, `endMs`, `time` (mm:ss of the start) and `title`. Empty while the note has no outline (generate_outline makes one).',
  input: NoteRef,
  output: MarkerList,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, { noteId }) => app.queries.analysis.markers(caller.accountId, noteId),
})
