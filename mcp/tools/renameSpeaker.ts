// rename_speaker: PATCH /v1/notes/{id}/speakers/{label}, over MCP.
import { SpeakerList } from '../../contract/transcripts.ts'
import { RenameSpeakerInput } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const renameSpeaker = defineTool({
  name: 'rename_speaker',
  title: 'Name a speaker',
  description:
    'Gives speaker `label` (A, B, C... as in the transcript) of a note the confirmed `name` (1 to 120 characters), used in the transcript, the timeline and exports, and remembered for later notes of the same channel or podcast. ' +
    '`voiceExcluded: true` marks the speaker “do not recognise this person”. Returns the SpeakerList after the change. An unknown label answers not_found.',
  input: RenameSpeakerInput,
  output: SpeakerList,
  readOnly: false,
  idempotent: true,
  handle: ({ app, caller }, { noteId, label, name, voiceExcluded }) => app.transcripts.renameSpeaker(caller, noteId, label, name, voiceExcluded),
})
