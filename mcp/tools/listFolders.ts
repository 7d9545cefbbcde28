// list_folders: GET /v1/folders, over MCP.
import { FolderList } from '../../contract/notes.ts'
import { ListFoldersInput } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const listFolders = defineTool({
  name: 'list_folders',
  title: 'List folders',
  description: 'The folders, by name, each with its id, name, noteCount, createdAt and updatedAt. Use a folder id as folderId in list_recent_notes or search_notes.',
  input: ListFoldersInput,
  output: FolderList,
  readOnly: true,
  idempotent: true,
  handle: async ({ app, caller }) => ({ folders: await app.queries.folders.list(caller.accountId) }),
})
