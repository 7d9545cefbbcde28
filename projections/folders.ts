// The folders read model: one document per live folder. Writes are guarded by the revision read
// (projections/revisionGuard.ts).
import type { FolderEvent } from '../domain/folders/folder.ts'
import type { Projection } from './runner.ts'
import { folderStream } from '../domain/folders/folder.ts'
import { toDomainEvent } from '../ports/eventStore.ts'
import { insertIfAbsent, updateRead } from './revisionGuard.ts'

export const FOLDERS = 'folders'

export interface FolderDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  name: string
  createdAt: string
  updatedAt: string
  revision: number
}

export const foldersProjection: Projection = {
  name: 'folders',
  filter: { categories: ['folder'] },
  collections: [FOLDERS],
  async setup(docs) {
    await docs.collection(FOLDERS).createIndex({ keys: { accountId: 1, name: 1 }, name: 'by_account_name' })
  },
  async handle(events, docs) {
    const folders = docs.collection<FolderDoc>(FOLDERS)
    for (const recorded of events) {
      const e = toDomainEvent<FolderEvent>(recorded)
      const id = folderStream.idOf(recorded.streamName)
      const doc = await folders.findOne({ _id: id })
      if (doc && doc.revision >= recorded.revision) continue
      switch (e.type) {
        case 'FolderCreated':
          if (!doc) await insertIfAbsent(folders, { _id: id, accountId: e.data.accountId, name: e.data.name, createdAt: e.data.at, updatedAt: e.data.at, revision: recorded.revision })
          break
        case 'FolderRenamed':
          if (doc) await updateRead(folders, doc, { $set: { name: e.data.name, updatedAt: e.data.at, revision: recorded.revision } })
          break
        case 'FolderDeleted':
          await folders.deleteOne({ _id: id })
          break
      }
    }
  },
}
