// Deliverables: POST /v1/notes/{noteId}/deliverables (300 credits), the list, and the file
// download. The content comes from the note's analysis for the template's basis (the persisted
// one when it exists and was made with the speaker names in use; otherwise one made for the
// deliverable and not stored separately), laid out by the language engine, rendered into a real
// file (.eml, .docx, .pptx) and kept in the blob store. Anything failing after the charge is
// refunded by the refund process manager (CreditCommands.chargedOperation).
import { randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { DomainError } from '../domain/errors.ts'
import { PRICES } from '../domain/credits/prices.ts'
import { DELIVERABLE_BASIS, DELIVERABLE_FILES, deliverableDecider, deliverableStream } from '../domain/deliverables/deliverable.ts'
import { attributionOf, sameSpeakerNames, speakerNamesIn } from '../domain/language/content.ts'
import { LanguageEngineError, type LanguageEngine } from '../ports/languageEngine.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { FileRenderer } from '../ports/fileRenderer.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { CreateDeliverableRequest, Deliverable } from '../contract/deliverables.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'
import type { Caller } from './context.ts'
import type { AnalysisReads, DeliverableReads, NoteReads } from './reads.ts'

export interface DeliverableCommandsDeps {
  handler: CommandHandler
  credits: CreditCommands
  notes: Pick<NoteReads, 'ready'>
  analyses: Pick<AnalysisReads, 'latestDraft'>
  deliverables: DeliverableReads
  sync: ReadModelSync
  blobs: BlobStore
  engine: LanguageEngine
  renderers: Record<'email' | 'document' | 'slides', FileRenderer>
  clock?: () => Date
}

/** A file name from a title: accents folded, words joined by dashes. */
export function fileNameOf(title: string, id: string, extension: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '')
  return `${slug || `deliverable-${id.slice(0, 8)}`}.${extension}`
}

export const deliverableBlobKey = (noteId: string, id: string, extension: string) => `deliverables/${noteId}/${id}.${extension}`

export class DeliverableCommands {
  private readonly clock: () => Date
  constructor(private readonly deps: DeliverableCommandsDeps) {
    this.clock = deps.clock ?? (() => new Date())
  }

  async create(caller: Caller, noteId: string, body: CreateDeliverableRequest): Promise<{ deliverable: Deliverable }> {
    const { note, source } = await this.deps.notes.ready(caller.accountId, noteId)
    const id = randomUUID()
    const file = DELIVERABLE_FILES[body.kind]
    const blobKey = deliverableBlobKey(noteId, id, file.extension)
    // Anything failing after the charge is refunded by the refund process manager.
    return this.deps.credits.chargedOperation(caller.accountId, { operation: PRICES.deliverable.operation, cost: PRICES.deliverable.credits, noteId, requestId: caller.requestId }, async (chargeId) => {
      let stored = false
      try {
        const basis = DELIVERABLE_BASIS[body.template]!
        // The persisted analysis, unless it names speakers otherwise than they are named now (a
        // rename since) or gave a line to another speaker than now (a line moved since): then one
        // made for the deliverable, so the file says who said what as the transcript does.
        const persisted = await this.deps.analyses.latestDraft(caller.accountId, noteId, basis)
        const current = persisted && sameSpeakerNames(persisted.speakerNames, speakerNamesIn(source)) && (persisted.attribution === null || persisted.attribution === attributionOf(source))
        const analysis = current ? persisted.draft : (await this.engine((e) => e.analyze(source, basis))).draft
        const createdAt = this.clock().toISOString()
        const { draft, info } = await this.engine((e) =>
          e.deliverable({ kind: body.kind, template: body.template, locale: body.locale, transcript: source, analysis, date: note.recordedAt ?? note.createdAt }),
        )
        const bytes = await this.deps.renderers[body.kind].render({ id, title: draft.title, subject: draft.subject, sections: draft.sections, locale: body.locale, createdAt, author: 'Notes' })
        const blob = await this.deps.blobs.put(blobKey, Readable.from(bytes), { contentType: file.contentType, maxBytes: 100 * 1024 * 1024 })
        stored = true
        const result = await this.deps.handler.handle(
          deliverableStream.of(id),
          {
            type: 'CreateDeliverable',
            deliverableId: id,
            noteId,
            accountId: caller.accountId,
            kind: body.kind,
            template: body.template,
            locale: body.locale,
            title: draft.title,
            subject: draft.subject,
            sections: draft.sections,
            file: { blobKey, fileName: fileNameOf(draft.title, id, file.extension), contentType: file.contentType, sizeBytes: blob.sizeBytes, sha256: blob.sha256 },
            ...info,
            chargeId,
            now: createdAt,
          },
          deliverableDecider,
          { metadata: { requestId: caller.requestId, accountId: caller.accountId } },
        )
        await this.deps.sync.waitFor('deliverables', result.position)
        const deliverable = await this.deps.deliverables.get(caller.accountId, id)
        if (!deliverable) throw new Error('the deliverable read model did not catch up')
        return { deliverable }
      } catch (err) {
        if (stored) await this.deps.blobs.delete(blobKey).catch(() => {})
        throw err
      }
    })
  }

  /** Runs an engine call; an engine that does not answer is 502 chat_failed (the caller refunds). */
  private async engine<T>(call: (e: LanguageEngine) => Promise<T>): Promise<T> {
    try {
      return await call(this.deps.engine)
    } catch (err) {
      if (err instanceof LanguageEngineError) throw new DomainError('chat_failed', `The model did not write the deliverable (${err.message}); the credits were refunded.`)
      throw err
    }
  }

  list(caller: Caller, noteId: string) {
    return this.deps.deliverables.list(caller.accountId, noteId)
  }

  /** The stored file of a deliverable (GET .../deliverables/{id}/file). */
  async file(caller: Caller, noteId: string, deliverableId: string): Promise<{ body: Readable; fileName: string; contentType: string; sizeBytes: number }> {
    const file = await this.deps.deliverables.file(caller.accountId, noteId, deliverableId)
    const body = await this.deps.blobs.read(file.blobKey)
    return { body, fileName: file.fileName, contentType: file.contentType, sizeBytes: file.sizeBytes }
  }
}
