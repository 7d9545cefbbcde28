// generate_ai_notes: POST /v1/notes/{id}/analysis, over MCP: the same command, so the same
// charge per template, the same refunds and the same ledger entries.
import { AnalysisList, TEMPLATES, templatesOf } from '../../contract/analysis.ts'
import { GenerateAiNotesInput } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const generateAiNotes = defineTool({
  name: 'generate_ai_notes',
  title: 'Generate AI notes (analyses)',
  description:
    `Generates (or regenerates) analyses of a ready note for \`template\` and/or \`templates\` (1 to 8 in all; ${TEMPLATES.join(', ')}): summary, keyPoints, actionItems, decisions, questions, topics, anchors (the millisecond each item is said), mindmap, and for debate its sections. ` +
    'Returns the note’s analyses (the latest per template) and `report`: `ok` (templates that came out) and `failed` (with the reason; those are refunded). When every template fails: llm_invalid_json, nothing charged. ' +
    'Not enough credits for every template: upgrade_required with balance and required. Read them back with get_note or list_highlights.',
  input: GenerateAiNotesInput,
  output: AnalysisList,
  readOnly: false,
  handle: ({ app, caller }, args) => app.analysis.generate(caller, args.noteId, templatesOf(args)),
})
