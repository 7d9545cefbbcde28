// A folder, stream `folder-<folderId>`. Deleting one moves its notes to "no folder" first (the
// folder commands do that note by note), so a note never points at a folder that is gone.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { streamKind } from '../streams.ts'

export const folderStream = streamKind('folder')

export type FolderCreated = DomainEvent<'FolderCreated', { folderId: string; accountId: string; name: string; at: string }>
export type FolderRenamed = DomainEvent<'FolderRenamed', { name: string; at: string }>
export type FolderDeleted = DomainEvent<'FolderDeleted', { at: string }>
export type FolderEvent = FolderCreated | FolderRenamed | FolderDeleted

export type FolderCommand =
  | { type: 'CreateFolder'; folderId: string; accountId: string; name: string; now: string }
  | { type: 'RenameFolder'; accountId: string; name: string; now: string }
  | { type: 'DeleteFolder'; accountId: string; now: string }

export type FolderState = { status: 'none' } | { status: 'active' | 'deleted'; folderId: string; accountId: string; name: string }

export function ownedFolder(s: FolderState, accountId: string) {
  if (s.status !== 'active' || s.accountId !== accountId) throw new DomainError('not_found', 'No folder with that id belongs to you.')
  return s
}

export const folderDecider: Decider<FolderCommand, FolderEvent, FolderState> = {
  initialState: () => ({ status: 'none' }),
  evolve(s, e) {
    switch (e.type) {
      case 'FolderCreated':
        return { status: 'active', folderId: e.data.folderId, accountId: e.data.accountId, name: e.data.name }
      case 'FolderRenamed':
        return s.status === 'none' ? s : { ...s, name: e.data.name }
      case 'FolderDeleted':
        return s.status === 'none' ? s : { ...s, status: 'deleted' }
    }
  },
  decide(c, s) {
    switch (c.type) {
      case 'CreateFolder':
        if (s.status !== 'none') {
          if (s.accountId === c.accountId && s.status === 'active') return []
          throw new DomainError('conflict', 'This folder id is taken.')
        }
        return [{ type: 'FolderCreated', data: { folderId: c.folderId, accountId: c.accountId, name: c.name, at: c.now } }]
      case 'RenameFolder': {
        const f = ownedFolder(s, c.accountId)
        return f.name === c.name ? [] : [{ type: 'FolderRenamed', data: { name: c.name, at: c.now } }]
      }
      case 'DeleteFolder':
        if (s.status === 'deleted' && s.accountId === c.accountId) return []
        ownedFolder(s, c.accountId)
        return [{ type: 'FolderDeleted', data: { at: c.now } }]
    }
  },
}
