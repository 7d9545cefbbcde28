// suggest_speaker_names: POST /v1/notes/{id}/speakers/suggest, over MCP: the same command, and
// the same 10 per hour, counted in the same bucket per API key (or OAuth grant) as REST.
import { SpeakerList } from '../../contract/transcripts.ts'
import { NoteRef } from '../../contract/mcp.ts'
import { OPERATION_LIMITS } from '../../domain/limits.ts'
import { defineTool } from '../tool.ts'

const limit = OPERATION_LIMITS.speakersSuggest

export const suggestSpeakerNames = defineTool({
  name: 'suggest_speaker_names',
  title: 'Suggest speaker names',
  description:
    'Infers the names of a ready note’s speakers from self-introductions, who addresses whom, the title, the channel or show, and the people already confirmed on earlier notes of the same source (no voice analysis). ' +
    'A suggestion from confidence 0.8 becomes the name in use (nameStatus suggested); a name the user gave is never overwritten. Returns the SpeakerList with `evidence` for each suggestion. ' +
    `At most ${limit.max} per hour per API key or OAuth grant, together with POST /v1/notes/{id}/speakers/suggest: then rate_limit_exceeded with retryAfter (seconds). Inference failing: speaker_naming_failed, nothing changed.`,
  input: NoteRef,
  output: SpeakerList,
  readOnly: false,
  async handle({ app, caller, credential }, { noteId }) {
    await app.limits.hit(limit, credential)
    return app.transcripts.suggestSpeakerNames(caller, noteId)
  },
})
