// list_voice_profiles: GET /v1/voice-profiles, over MCP.
import { VoiceProfiles } from '../../contract/transcripts.ts'
import { NoArguments } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const listVoiceProfiles = defineTool({
  name: 'list_voice_profiles',
  title: 'List voice profiles',
  description:
    'The biometric consent (`consent.status`: granted, revoked, never or outdated; given only by the account owner in the app, never through a key or token) and the voice `profiles` of people the user confirmed on their own recordings: id, name, confirmedAppearances, voiceSeconds, hasVoiceprint, voiceExcluded. ' +
    'Voice vectors are never returned. `voiceMatching` says whether voices can be matched here and, if not, why.',
  input: NoArguments,
  output: VoiceProfiles,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }) => app.voice.profiles(caller),
})
