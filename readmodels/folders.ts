// Queries over the folders read model.
import type { DocumentStore } from '../ports/documentStore.ts'
import { FOLDERS, type FolderDoc } from '../projections/folders.ts'
import { NOTES } from '../projections/notes.ts'
import type { Folder } from '../contract/notes.ts'

export async function listFolders(docs: DocumentStore, accountId: string): Promise<Folder[]> {
  const folders = await docs.collection<FolderDoc>(FOLDERS).find({ accountId }, { sort: { name: 1 } })
  return Promise.all(
    folders.map(async (f) => ({
      id: f._id,
      name: f.name,
      noteCount: await docs.collection(NOTES).countDocuments({ accountId, folderId: f._id }),
      createdAt: f.createdAt,
      updatedAt: f.updatedAt,
    })),
  )
}
