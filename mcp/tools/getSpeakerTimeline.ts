// get_speaker_timeline: GET /v1/notes/{id}/speakers/timeline (extension), over MCP.
import { SpeakerTimeline } from '../../contract/transcripts.ts'
import { NoteRef } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const getSpeakerTimeline = defineTool({
  name: 'get_speaker_timeline',
  title: 'Who speaks when',
  description:
    'The note’s speakers (label, name in use, nameStatus, suggestedName with confidence, speechSeconds, segmentCount) and its `turns`: runs of consecutive segments of one speaker, each with speakerLabel, speakerName, startMs, endMs, firstSegment, lastSegment and segmentCount; and `durationMs`. ' +
    'A note without a transcript answers no_transcript.',
  input: NoteRef,
  output: SpeakerTimeline,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }, { noteId }) => app.queries.transcripts.timeline(caller.accountId, noteId),
})
