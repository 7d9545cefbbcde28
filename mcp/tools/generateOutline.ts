// generate_outline: GET /v1/notes/{id}/outline?generate=1, over MCP: the same command, so the
// same 50-credit charge (none when the outline exists already), the same refund when it fails.
import { Outline } from '../../contract/analysis.ts'
import { NoteRef } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const generateOutline = defineTool({
  name: 'generate_outline',
  title: 'Generate the outline of a note',
  description:
    'Makes the chapters of a ready note when it has none, and returns the Outline: `outline` (startMs, endMs, headline; from 0 to the end of the audio, each boundary the start of a transcript segment), `generated`, `attemptedAt`. ' +
    'An outline that exists is returned as it is, free. A failed attempt is refunded and comes back as generated: false with attemptedAt. Not enough credits: insufficient_credits with balance and required.',
  input: NoteRef,
  output: Outline,
  readOnly: false,
  handle: ({ app, caller }, { noteId }) => app.analysis.outline(caller, noteId, true),
})
