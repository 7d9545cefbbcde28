// The notes resource over REST (spec part 4): thin adapters from HTTP to the note commands and
// queries, which MCP tools call too.
import { z } from 'zod'
import type { Application } from '../../commands/application.ts'
import { PRICES } from '../../domain/credits/prices.ts'
import { CreateNoteRequest, CreateNoteResponse, FinalizeRequest, FinalizeResponse, ListNotesQuery, NoteDetail, NoteIdParams, NoteList, PatchNoteRequest } from '../../contract/notes.ts'
import { transcriptPreviewFor } from '../../domain/transcripts/preview.ts'
import { defineRoute, type RouteDef } from '../route.ts'

export const notesRoutes = (app: Application): RouteDef[] => [
  defineRoute({
    operationId: 'createNote',
    method: 'POST',
    path: '/v1/notes',
    tag: 'notes',
    summary: 'Create a note from a public link (import) or open a direct upload',
    description:
      'Two exclusive shapes: `audioUrl` (import), or `filename` + `contentType` (+ `fileSizeBytes`) for a direct upload, which answers with a presigned `upload` block: PUT the bytes there, then finalize. ' +
      'An optional `Idempotency-Key` header makes a retried request return the first answer instead of creating a second note; the same key with another link or file is 409 `invalid_state` (extension).',
    body: CreateNoteRequest,
    invalidCode: 'invalid_audio_url',
    // An upload's fields have codes of their own: a bad size or name is not a bad link.
    fieldCodes: { fileSizeBytes: 'invalid_request', filename: 'invalid_request', keepAudio: 'invalid_request' },
    invalidCodes: { contentType: 'unsupported_media_type' },
    response: {
      status: 202,
      schema: CreateNoteResponse,
      description: 'Accepted: the note is processing (or waiting for its upload).',
      links: Object.fromEntries(['getNote', 'finalizeNote'].map((operationId) => [operationId, { operationId, parameters: { id: '$response.body#/noteId' } }])),
    },
    errors: ['invalid_audio_url', 'invalid_request', 'insufficient_credits', 'file_too_large', 'unsupported_media_type', 'invalid_state'],
    // Spec part 7: "malformed create body, or link that cannot be ingested". A well-formed link
    // can still be refused, and no schema can say which: that depends on DNS and the allowlist.
    errorConditions: {
      invalid_audio_url:
        'malformed create body, or a link that cannot be ingested: its host does not resolve, or resolves to a private, loopback or otherwise non-public address (unless the operator allowlisted it)',
    },
    price: PRICES.import,
    async handle({ caller, body, req }) {
      // Checked with the API key (api/http/authentication.ts): a string here, or absent.
      const key = req.headers['idempotency-key']
      return app.notes.create(caller, body, typeof key === 'string' ? key : undefined)
    },
  }),
  defineRoute({
    operationId: 'listNotes',
    method: 'GET',
    path: '/v1/notes',
    tag: 'notes',
    summary: 'List notes, newest first',
    description: 'Cursor pagination stays stable while notes are added: pass `nextCursor` as `cursor` to get the next page.',
    query: ListNotesQuery,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: NoteList, description: 'A page of notes.' },
    errors: ['invalid_query'],
    async handle({ caller, query, reply }) {
      reply.type('application/json; charset=utf-8')
      return app.queries.notes.listJson(caller.accountId, query, transcriptPreviewFor(caller.plan))
    },
  }),
  defineRoute({
    operationId: 'getNote',
    method: 'GET',
    path: '/v1/notes/:id',
    tag: 'notes',
    summary: 'A note with its transcript summary, analyses and outline',
    params: NoteIdParams,
    notFound: true,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: NoteDetail, description: 'The note.' },
    errors: ['not_found'],
    handle: ({ caller, params }) => app.queries.notes.detail(caller.accountId, params.id, transcriptPreviewFor(caller.plan)),
  }),
  defineRoute({
    operationId: 'finalizeNote',
    method: 'POST',
    path: '/v1/notes/:id/finalize',
    tag: 'notes',
    summary: 'Close a direct upload after its bytes were PUT and queue the transcription',
    params: NoteIdParams,
    notFound: true,
    body: FinalizeRequest,
    invalidCode: 'invalid_request',
    response: { status: 202, schema: FinalizeResponse, description: 'Accepted: the transcription is queued.' },
    errors: ['invalid_request', 'not_found', 'quota_exceeded', 'invalid_state', 'file_too_large', 'duration_limit_exceeded', 'unsupported_media_type'],
    handle: ({ caller, params, body }) => app.notes.finalize(caller, params.id, body),
  }),
  defineRoute({
    operationId: 'updateNote',
    method: 'PATCH',
    path: '/v1/notes/:id',
    tag: 'notes',
    summary: 'Change a note’s title, description, folder or tags',
    description: '`folderId: null` takes the note out of its folder; `tags` replaces the whole list.',
    extension: true,
    params: NoteIdParams,
    notFound: true,
    body: PatchNoteRequest,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: NoteDetail, description: 'The note after the change.' },
    errors: ['invalid_request', 'not_found'],
    async handle({ caller, params, body }) {
      await app.notes.edit(caller, params.id, body)
      return app.queries.notes.detail(caller.accountId, params.id, transcriptPreviewFor(caller.plan))
    },
  }),
  defineRoute({
    operationId: 'deleteNote',
    method: 'DELETE',
    path: '/v1/notes/:id',
    tag: 'notes',
    summary: 'Delete a note and all its content for good',
    description:
      'The transcript, translations, speakers, analyses, outline, deliverables, audio and search entries are removed from every read model and file store, and the content recorded in the event log is made unreadable by destroying the note’s own encryption key (crypto-shredding). The credit history stays: ledger entries keep the note’s id and amounts. Afterwards the note answers 404 not_found everywhere. Free.',
    extension: true,
    params: NoteIdParams,
    notFound: true,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: z.object({ deleted: z.literal(true), noteId: z.uuid() }), description: 'Deleted.' },
    errors: ['not_found'],
    async handle({ caller, params }) {
      await app.notes.delete(caller, params.id)
      return { deleted: true as const, noteId: params.id }
    },
  }),
]
