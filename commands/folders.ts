// Folder commands (a documented extension of the spec). Deleting a folder first moves its notes
// to "no folder", then deletes it; a crash in between leaves a folder that a retry finishes.
import { randomUUID } from 'node:crypto'
import { folderDecider, folderStream, ownedFolder, type FolderCommand } from '../domain/folders/folder.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { NoteReads } from './reads.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { Caller } from './context.ts'

export class FolderCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly notes: Pick<NoteReads, 'idsInFolder'>,
    private readonly sync: ReadModelSync,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  private async run(caller: Caller, folderId: string, command: FolderCommand) {
    const r = await this.handler.handle(folderStream.of(folderId), command, folderDecider, { metadata: { requestId: caller.requestId } })
    await this.sync.waitFor('folders', r.position)
    return r
  }

  async create(caller: Caller, name: string): Promise<string> {
    const folderId = randomUUID()
    await this.run(caller, folderId, { type: 'CreateFolder', folderId, accountId: caller.accountId, name, now: this.clock().toISOString() })
    return folderId
  }

  async rename(caller: Caller, folderId: string, name: string): Promise<void> {
    await this.run(caller, folderId, { type: 'RenameFolder', accountId: caller.accountId, name, now: this.clock().toISOString() })
  }

  async delete(caller: Caller, folderId: string): Promise<void> {
    // Checks ownership before touching any note.
    const { state } = await this.handler.load(folderStream.of(folderId), folderDecider)
    const deletedByCaller = state.status === 'deleted' && state.accountId === caller.accountId
    if (!deletedByCaller) ownedFolder(state, caller.accountId)
    let last: number | null = null
    for (const noteId of await this.notes.idsInFolder(caller.accountId, folderId)) {
      const r = await this.handler.handle(
        noteStream.of(noteId),
        { type: 'EditNote', accountId: caller.accountId, changes: { folderId: null }, now: this.clock().toISOString() },
        noteDecider,
        { metadata: { requestId: caller.requestId } },
      )
      last = r.position ?? last
    }
    await this.sync.waitFor('notes', last)
    await this.run(caller, folderId, { type: 'DeleteFolder', accountId: caller.accountId, now: this.clock().toISOString() })
  }
}
