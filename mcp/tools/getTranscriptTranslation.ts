// get_transcript_translation: GET /v1/notes/{id}/transcript/translation, over MCP: the same
// query. Free; on the free plan the translated segments are cut to the preview of
// domain/mcp/tools.ts and the result says so.
import { TranslationState } from '../../contract/transcripts.ts'
import { GetTranscriptTranslationInput } from '../../contract/mcp.ts'
import { preferredLanguage } from '../../domain/languages.ts'
import { FREE_PLAN_PREVIEW_RULE, transcriptPreviewFor } from '../../domain/transcripts/preview.ts'
import { defineTool } from '../tool.ts'

export const getTranscriptTranslation = defineTool({
  name: 'get_transcript_translation',
  title: 'Get a translation of the transcript',
  description:
    'The translation of a note’s transcript into `language` (es, en, de, fr, it or pt; default en), aligned with the transcript by segment `sequence`: ' +
    '`status` (none when never requested, pending, running, ready, failed with errorCode), `progress`, `stale` with `staleSegments` (changed after translating), and `segments` (sequence, startMs, endMs, speakerLabel, speakerName (the name in use), translated text or null). ' +
    'Translations are requested in the app or with POST /v1/notes/{id}/transcript/translation. ' +
    `On the free plan only a preview comes back (${FREE_PLAN_PREVIEW_RULE}, of translated text): then \`truncated\` is true and \`truncation\` tells how much is shown and how to get the rest.`,
  input: GetTranscriptTranslationInput,
  output: TranslationState,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, { noteId, language }) => app.queries.transcripts.translation(caller.accountId, noteId, language ?? preferredLanguage(undefined), transcriptPreviewFor(caller.plan)),
})
