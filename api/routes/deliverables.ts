// Deliverables over REST (spec part 4): create (300 credits), list, and the file download
// (an extension: the deliverable's `downloadUrl`, authenticated like every /v1 route).
import type { Readable } from 'node:stream'
import { z } from 'zod'
import type { Application } from '../../commands/application.ts'
import { PRICES } from '../../domain/credits/prices.ts'
import { CreateDeliverableRequest, DeliverableCreated, DeliverableFileParams, DeliverableList, NoteDeliverableParams } from '../../contract/deliverables.ts'
import { defineRoute, type RouteDef } from '../route.ts'

export const deliverableRoutes = (app: Application): RouteDef[] => [
  defineRoute({
    operationId: 'createDeliverable',
    method: 'POST',
    path: '/v1/notes/:noteId/deliverables',
    tag: 'deliverables',
    summary: 'Generate an email, document or slide deck from a note (300 credits)',
    description:
      '`kind` `email` (templates follow_up, recap, next_steps, thank_you; an .eml file), `document` (project_brief, meeting_recap, fiscal_revision, legal_acta, medical_consult; .docx) or ' +
      '`slides` (exec_summary, kickoff, recap_visual, sales_pitch_es; .pptx); `locale` es or en. The note must be ready. Generation is synchronous; a failure is refunded and nothing is stored.',
    params: NoteDeliverableParams,
    notFound: true,
    body: CreateDeliverableRequest,
    invalidCode: 'invalid_template',
    response: { status: 201, schema: DeliverableCreated, description: 'Created: the deliverable, with its `downloadUrl`.' },
    errors: ['invalid_template', 'not_found', 'insufficient_credits', 'note_not_ready', 'chat_failed'],
    price: PRICES.deliverable,
    handle: ({ caller, params, body }) => app.deliverables.create(caller, params.noteId, body),
  }),
  defineRoute({
    operationId: 'listDeliverables',
    method: 'GET',
    path: '/v1/notes/:noteId/deliverables',
    tag: 'deliverables',
    summary: 'The deliverables generated from a note, newest first',
    params: NoteDeliverableParams,
    notFound: true,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: DeliverableList, description: 'The deliverables.' },
    errors: ['not_found'],
    handle: ({ caller, params }) => app.deliverables.list(caller, params.noteId),
  }),
  defineRoute({
    operationId: 'downloadDeliverable',
    method: 'GET',
    path: '/v1/notes/:noteId/deliverables/:deliverableId/file',
    tag: 'deliverables',
    summary: 'Download a deliverable’s file (.eml, .docx or .pptx)',
    extension: true,
    params: DeliverableFileParams,
    notFound: true,
    invalidCode: 'invalid_query',
    response: {
      status: 200,
      schema: z.string(),
      description: 'The file, as an attachment.',
      contentTypes: {
        'message/rfc822': 'email (.eml)',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'document (.docx)',
        'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'slides (.pptx)',
      },
    },
    errors: ['not_found'],
    async handle({ caller, params, reply }) {
      const f = await app.deliverables.file(caller, params.noteId, params.deliverableId)
      reply.header('content-type', f.contentType)
      reply.header('content-length', String(f.sizeBytes))
      reply.header('content-disposition', `attachment; filename="${f.fileName}"; filename*=UTF-8''${encodeURIComponent(f.fileName)}`)
      return f.body as Readable as unknown as string
    },
  }),
]
