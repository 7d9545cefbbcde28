// get_transcript_segments: GET /v1/notes/{id}/transcript (format json), over MCP. The same query
// the REST route renders; REST charges 1 credit for the read, MCP does not (the spec's cost class
// "free, but the content is truncated on the free plan"): on the free plan the segments are cut
// to the preview of domain/transcripts/preview.ts and the result says so.
import { Transcript } from '../../contract/transcripts.ts'
import { GetTranscriptSegmentsInput } from '../../contract/mcp.ts'
import { FREE_PLAN_PREVIEW_RULE, transcriptPreviewFor } from '../../domain/transcripts/preview.ts'
import { defineTool } from '../tool.ts'

export const getTranscriptSegments = defineTool({
  name: 'get_transcript_segments',
  title: 'Get the transcript segments',
  description:
    'The transcript of a note as segments in order, each with id, sequence, startMs, endMs, speakerLabel, speakerName (the name in use), text, confidence, locale and words (per-word timings when the engine gave them); ' +
    'plus language, languagesDetected, durationSeconds, fullText and speakers. With `translation` (es, en, de, fr, it, pt) every segment also carries the requested translation (a segment not translated yet has no `translation` field) and `translation` gives its status; a translation never requested answers no_transcript. ' +
    `On the free plan only a preview comes back (${FREE_PLAN_PREVIEW_RULE}): then \`truncated\` is true and \`truncation\` tells how many segments and characters are shown of how many, and how to get the rest. ` +
    'A note without a transcript answers no_transcript.',
  input: GetTranscriptSegmentsInput,
  output: Transcript,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, { noteId, translation }) => app.queries.transcripts.get(caller.accountId, noteId, { translation, limit: transcriptPreviewFor(caller.plan) }),
})
