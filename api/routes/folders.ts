// Folders over REST: a documented extension (the spec names `folderId` but no folder endpoints).
import { z } from 'zod'
import type { Application } from '../../commands/application.ts'
import { Folder, FolderIdParams, FolderList, FolderRequest } from '../../contract/notes.ts'
import { DomainError } from '../../domain/errors.ts'
import { defineRoute, type RouteDef } from '../route.ts'

async function folderById(app: Application, accountId: string, folderId: string) {
  const found = (await app.queries.folders.list(accountId)).find((f) => f.id === folderId)
  if (!found) throw new DomainError('not_found', 'No folder with that id belongs to you.')
  return found
}

export const foldersRoutes = (app: Application): RouteDef[] => [
  defineRoute({
    operationId: 'listFolders',
    method: 'GET',
    path: '/v1/folders',
    tag: 'folders',
    summary: 'List folders with their note counts',
    extension: true,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: FolderList, description: 'The folders, by name.' },
    errors: [],
    handle: async ({ caller }) => ({ folders: await app.queries.folders.list(caller.accountId) }),
  }),
  defineRoute({
    operationId: 'createFolder',
    method: 'POST',
    path: '/v1/folders',
    tag: 'folders',
    summary: 'Create a folder',
    extension: true,
    body: FolderRequest,
    invalidCode: 'invalid_request',
    response: {
      status: 201,
      schema: Folder,
      description: 'The new folder.',
      links: Object.fromEntries(['renameFolder', 'deleteFolder'].map((operationId) => [operationId, { operationId, parameters: { folderId: '$response.body#/id' } }])),
    },
    errors: ['invalid_request'],
    async handle({ caller, body }) {
      const id = await app.folders.create(caller, body.name)
      return folderById(app, caller.accountId, id)
    },
  }),
  defineRoute({
    operationId: 'renameFolder',
    method: 'PATCH',
    path: '/v1/folders/:folderId',
    tag: 'folders',
    summary: 'Rename a folder',
    extension: true,
    params: FolderIdParams,
    notFound: true,
    body: FolderRequest,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: Folder, description: 'The folder after the change.' },
    errors: ['invalid_request', 'not_found'],
    async handle({ caller, params, body }) {
      await app.folders.rename(caller, params.folderId, body.name)
      return folderById(app, caller.accountId, params.folderId)
    },
  }),
  defineRoute({
    operationId: 'deleteFolder',
    method: 'DELETE',
    path: '/v1/folders/:folderId',
    tag: 'folders',
    summary: 'Delete a folder; its notes move to no folder',
    extension: true,
    params: FolderIdParams,
    notFound: true,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: z.object({ deleted: z.literal(true), folderId: z.uuid() }), description: 'Deleted.' },
    errors: ['not_found'],
    async handle({ caller, params }) {
      await app.folders.delete(caller, params.folderId)
      return { deleted: true as const, folderId: params.folderId }
    },
  }),
]
