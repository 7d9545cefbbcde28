// Every MCP tool the server offers, in the spec's order. A new tool is one module in this folder,
// added here and nowhere else: its cost class comes from the spec's table
// (domain/mcp/tools.ts), the demo endpoint offers it when it is read-only, and /mcp/info lists it.
import type { ToolDef } from '../tool.ts'
import { searchNotes } from './searchNotes.ts'
import { listRecentNotes } from './listRecentNotes.ts'
import { getNote } from './getNote.ts'
import { listFolders } from './listFolders.ts'
import { importFromUrl } from './importFromUrl.ts'
import { waitForTranscription } from './waitForTranscription.ts'
import { founderStatus } from './founderStatus.ts'

export const TOOLS: readonly ToolDef[] = [searchNotes, listRecentNotes, getNote, listFolders, importFromUrl, waitForTranscription, founderStatus]
