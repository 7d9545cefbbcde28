// Every MCP tool the server offers, in the spec's order. A new tool is one module in this folder,
// added here and nowhere else: its cost class comes from the spec's table
// (domain/mcp/tools.ts), the demo endpoint offers it when it is read-only, and /mcp/info lists it.
import type { ToolDef } from '../tool.ts'
import { searchNotes } from './searchNotes.ts'
import { listRecentNotes } from './listRecentNotes.ts'
import { getNote } from './getNote.ts'
import { getTranscriptSegments } from './getTranscriptSegments.ts'
import { getTranscriptTranslation } from './getTranscriptTranslation.ts'
import { listFolders } from './listFolders.ts'
import { listHighlights } from './listHighlights.ts'
import { getOutline } from './getOutline.ts'
import { listMarkers } from './listMarkers.ts'
import { getSpeakerTimeline } from './getSpeakerTimeline.ts'
import { importFromUrl } from './importFromUrl.ts'
import { waitForTranscription } from './waitForTranscription.ts'
import { generateAiNotes } from './generateAiNotes.ts'
import { generateOutline } from './generateOutline.ts'
import { replaceInTranscript } from './replaceInTranscript.ts'
import { suggestSpeakerNames } from './suggestSpeakerNames.ts'
import { renameSpeaker } from './renameSpeaker.ts'
import { listVoiceProfiles } from './listVoiceProfiles.ts'
import { founderStatus } from './founderStatus.ts'
import { askNote } from './askNote.ts'
import { extractClip } from './extractClip.ts'

export const TOOLS: readonly ToolDef[] = [
  searchNotes,
  listRecentNotes,
  getNote,
  getTranscriptSegments,
  getTranscriptTranslation,
  listFolders,
  listHighlights,
  getOutline,
  listMarkers,
  getSpeakerTimeline,
  importFromUrl,
  waitForTranscription,
  generateAiNotes,
  generateOutline,
  replaceInTranscript,
  suggestSpeakerNames,
  renameSpeaker,
  listVoiceProfiles,
  founderStatus,
  askNote,
  extractClip,
]
