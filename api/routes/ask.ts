// Questions with citations over REST (spec part 4): thin edges over AskCommands (MCP ask_note
// calls the same).
import type { Application } from '../../commands/application.ts'
import { PRICES } from '../../domain/credits/prices.ts'
import { Answer, AskRequest, GlobalAnswer, GlobalAskRequest } from '../../contract/ask.ts'
import { NoteIdParams } from '../../contract/notes.ts'
import { defineRoute, type RouteDef } from '../route.ts'

export const askRoutes = (app: Application): RouteDef[] => [
  defineRoute({
    operationId: 'askNote',
    method: 'POST',
    path: '/v1/notes/:id/ask',
    tag: 'ask',
    summary: 'Ask a question about one note; the answer quotes the audio as [mm:ss]',
    description:
      '`citedSegments` are the transcript segments the answer quotes; each quoted [mm:ss] is the start of one of them. ' +
      'Extension: the answer carries a `sessionId`; send it back to ask a follow-up that sees the earlier turns. ' +
      '10 credits, refunded when the model does not answer (502 `chat_failed`). ' +
      'Extension: an `Idempotency-Key` header makes a retried request answer as the first did, charged once; the same key with another question (or while its first request is still running or failed) is 409 `invalid_state`.',
    params: NoteIdParams,
    notFound: true,
    body: AskRequest,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: Answer, description: 'The answer.' },
    errors: ['invalid_request', 'not_found', 'insufficient_credits', 'note_not_ready', 'chat_failed', 'invalid_state'],
    price: PRICES.askNote,
    handle: ({ caller, params, body }) => app.ask.askNote(caller, params.id, body),
  }),
  defineRoute({
    operationId: 'askLibrary',
    method: 'POST',
    path: '/v1/ask',
    tag: 'ask',
    summary: 'Ask a question across every note you own; the answer quotes [Note title | mm:ss]',
    description:
      'Only your own notes are searched. Pass the returned `sessionId` to continue the conversation (an unknown or foreign `sessionId` is 404 `not_found`). ' +
      '10 credits, refunded when the model does not answer (502 `chat_failed`). ' +
      'Extension: an `Idempotency-Key` header makes a retried request answer as the first did, charged once; the same key with another question (or while its first request is still running or failed) is 409 `invalid_state`.',
    body: GlobalAskRequest,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: GlobalAnswer, description: 'The answer.' },
    errors: ['invalid_request', 'not_found', 'insufficient_credits', 'chat_failed', 'invalid_state'],
    price: PRICES.askLibrary,
    handle: ({ caller, body }) => app.ask.askLibrary(caller, body),
  }),
]
