// list_highlights: GET /v1/notes/{id}/highlights (extension), over MCP: the moments the analyses
// and the outline point at, with their times.
import { HighlightList } from '../../contract/highlights.ts'
import { ListHighlightsInput } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const listHighlights = defineTool({
  name: 'list_highlights',
  title: 'List the highlights of a note',
  description:
    'The moments a note’s analyses and outline point at, in the order they are said: every key point, action item (with assignee and deadline), decision and question of the latest analysis of each template that has an anchor (kind key_point, action_item, decision, question; `template` says which), ' +
    'and every chapter of the outline (kind chapter, with endMs). Each has `text`, `startMs` and `time` (mm:ss). `template` keeps only that template’s items (chapters stay). Empty until analyses or an outline exist (generate_ai_notes, generate_outline).',
  input: ListHighlightsInput,
  output: HighlightList,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, { noteId, template }) => app.queries.analysis.highlights(caller.accountId, noteId, template),
})
