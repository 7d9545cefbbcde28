// replace_in_transcript: POST /v1/notes/{id}/transcript/replace (extension), over MCP.
import { ReplaceInTranscriptResponse } from '../../contract/transcripts.ts'
import { ReplaceInTranscriptInput } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const replaceInTranscript = defineTool({
  name: 'replace_in_transcript',
  title: 'Find and replace in a transcript',
  description:
    'Replaces the literal text `find` with `replace` in every segment of the note’s transcript; case-insensitive unless `caseSensitive`, whole words only unless `wholeWord` is false. ' +
    'The full text, exports and search follow; ready translations lose the changed segments’ translations and report them as stale. ' +
    'Returns `occurrences` (0: nothing matched, nothing changed), `changedSegments` (sequence, before, after) and `staleTranslations`.',
  input: ReplaceInTranscriptInput,
  output: ReplaceInTranscriptResponse,
  readOnly: false,
  destructive: true,
  handle: ({ app, caller }, { noteId, ...request }) => app.transcripts.replace(caller, noteId, request),
})
