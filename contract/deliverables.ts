// Deliverables (spec part 4): emails, documents and slide decks generated from a note, each
// stored as a real file (.eml, .docx, .pptx) and downloadable through the API.
import { z } from 'zod'
import { DateTime, Uuid } from './common.ts'
import { DELIVERABLE_LOCALES, DELIVERABLE_TEMPLATES, type DeliverableKind } from '../domain/deliverables/templates.ts'

export const DeliverableKindSchema = z.enum(Object.keys(DELIVERABLE_TEMPLATES) as [DeliverableKind, ...DeliverableKind[]])
export const DeliverableLocale = z.enum(DELIVERABLE_LOCALES)

// One shape per kind, so the templates a kind allows are part of the contract (a oneOf on `kind`).
const requestFor = <K extends DeliverableKind>(kind: K) =>
  z.object({
    kind: z.literal(kind),
    template: z.enum(DELIVERABLE_TEMPLATES[kind] as unknown as [string, ...string[]], { error: `for kind ${kind} the template is one of ${DELIVERABLE_TEMPLATES[kind].join(', ')}` }),
    locale: DeliverableLocale,
  })
export const CreateDeliverableRequest = z
  .discriminatedUnion(
    'kind',
    Object.keys(DELIVERABLE_TEMPLATES).map((k) => requestFor(k as DeliverableKind)) as unknown as [ReturnType<typeof requestFor>, ...ReturnType<typeof requestFor>[]],
    { error: `kind is one of ${Object.keys(DELIVERABLE_TEMPLATES).join(', ')}` },
  )
  .meta({ id: 'CreateDeliverableRequest', description: 'The templates allowed depend on kind (also listed in x-service-deliverable-templates).' })
export type CreateDeliverableRequest = z.infer<typeof CreateDeliverableRequest>

export const Deliverable = z
  .object({
    id: Uuid,
    noteId: Uuid,
    kind: DeliverableKindSchema,
    template: z.string(),
    locale: DeliverableLocale,
    status: z.literal('ready').meta({ description: 'generation is synchronous: a deliverable that exists is ready (a failed one is not stored and is refunded)' }),
    title: z.string().meta({ description: 'document or deck title; for an email, its subject' }),
    content: z.string().meta({ description: 'the text of the file as Markdown (an email: its plain-text body)' }),
    createdAt: DateTime,
    fileName: z.string(),
    contentType: z.string(),
    sizeBytes: z.number().int(),
    downloadUrl: z.string().meta({ description: 'GET with the same API key: the .eml, .docx or .pptx file' }),
    model: z.string().meta({ description: 'the language engine model that wrote it' }),
  })
  .meta({ id: 'Deliverable' })
export type Deliverable = z.infer<typeof Deliverable>

export const DeliverableCreated = z.object({ deliverable: Deliverable }).meta({ id: 'DeliverableCreated' })
export const DeliverableList = z.object({ items: z.array(Deliverable) }).meta({ id: 'DeliverableList' })
export const NoteDeliverableParams = z.object({ noteId: Uuid })
export const DeliverableFileParams = z.object({ noteId: Uuid, deliverableId: Uuid })

/** What a remote model must return for a deliverable. */
export const DeliverableContent = z.object({
  title: z.string().trim().min(1).max(300),
  subject: z.string().trim().max(300).nullable(),
  sections: z
    .array(z.object({ heading: z.string().max(200), paragraphs: z.array(z.string().max(5000)).max(30), bullets: z.array(z.string().max(1000)).max(60) }))
    .min(1)
    .max(40),
})
