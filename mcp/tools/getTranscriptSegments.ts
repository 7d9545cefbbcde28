// get_transcript_segments: GET /v1/notes/{id}/transcript (format json), over MCP. The same query
// the REST route renders; REST charges 1 credit for the read, MCP does not (the spec's cost class
// "free, but the content is truncated on the free plan"): on the free plan the segments are cut
// to the preview of domain/mcp/tools.ts and the result says so.
import { Transcript } from '../../contract/transcripts.ts'
import { GetTranscriptSegmentsInput } from '../../contract/mcp.ts'
import { FREE_PLAN_GET_THE_REST, FREE_PLAN_PREVIEW, FREE_PLAN_PREVIEW_RULE } from '../../domain/mcp/tools.ts'

import { defineTool } from '../tool.ts'

export const getTranscriptSegments = defineTool({
  name: 'get_transcript_segments',
  title: 'Get the transcript segments',
  description:
    'The transcript of a note as segments in order, each with id, sequence, startMs, endMs, speakerLabel, speakerName (the name in use), text, confidence, locale and words (per-word timings when the engine gave them); ' +
    'plus language, languagesDetected, durationSeconds, fullText and speakers. With `translation` (es, en, de, fr, it, pt) every segment also carries an already generated translation (null where there is none yet) and `translation` gives its status. ' +
    `On the free plan only a preview comes back (${FREE_PLAN_PREVIEW_RULE}): then \`truncated\` is true and \`truncation\` tells how many segments and characters are shown of how many, and how to get the rest. ` +
    'A note without a transcript answers no_transcript.',
  input: GetTranscriptSegmentsInput,
  output: Transcript,
  readOnly: true,
  idempotent: true,
  async handle({ s, caller, truncated }, { noteId, translation }) {
    const t = await s.queries.transcripts.get(caller.accountId, noteId, { translation, limit: truncated ? FREE_PLAN_PREVIEW : undefined })
    return t.truncation ? { ...t, truncation: { ...t.truncation, rule: FREE_PLAN_PREVIEW_RULE, getTheRest: FREE_PLAN_GET_THE_REST } } : t
  },
})
