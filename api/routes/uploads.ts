// The presigned upload endpoint of the local blob store: `PUT /uploads/<noteId>?...&sig=...`.
// No API key: the signature is the permission, bound to the note, content type, size and expiry.
// The body streams to disk; nothing is buffered in memory. Served only with the local store:
// with S3 the presigned URLs point at the bucket and this service never sees the bytes.
// Finalize copies the bytes it checks to a key of their own (NoteCommands.bindUpload), so a PUT
// that ends after finalize changes nothing that is transcribed; it is answered 409 and its bytes
// are dropped.
import { z } from 'zod'
import type { Readable } from 'node:stream'
import type { Application } from '../../commands/application.ts'
import { DomainError } from '../../domain/errors.ts'
import { BlobTooLargeError, type SignedUploadTarget } from '../../ports/blobStore.ts'
import { uploadKey } from '../../commands/notes.ts'
import { parseMediaType } from '../../domain/notes/mediaType.ts'
import { defineRoute, type RouteDef } from '../route.ts'

const UploadQuery = z.looseObject({
  ct: z.string().optional().meta({ description: 'the content type the URL was signed for' }),
  max: z.string().optional(),
  size: z.string().optional(),
  exp: z.string().optional().meta({ description: 'expiry, seconds since the epoch' }),
  sig: z.string().optional().meta({ description: 'HMAC-SHA256 over method, note, content type, size rule and expiry' }),
})

const UploadReceipt = z
  .object({ noteId: z.uuid(), sizeBytes: z.number().int(), sha256: z.string(), next: z.string() })
  .meta({ id: 'UploadReceipt' })

export const uploadRoutes = (app: Application): RouteDef[] => (app.uploads ? [uploadRoute(app, app.uploads)] : [])

const uploadRoute = (app: Application, local: SignedUploadTarget): RouteDef =>
  defineRoute({
    operationId: 'uploadNoteBytes',
    method: 'PUT',
    path: '/uploads/:id',
    tag: 'uploads',
    summary: 'Upload the bytes of a direct upload (the presigned `upload.url`)',
    description:
      'Use `upload.url` and `upload.headers` exactly as returned by POST /v1/notes. The body is the raw file. A new PUT before finalize replaces the bytes; a PUT still running when the note is finalized is refused (409 invalid_state) and changes nothing.',
    extension: true,
    public: true,
    rawBody: true,
    params: z.object({ id: z.uuid() }),
    notFound: true,
    query: UploadQuery,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: UploadReceipt, description: 'Stored; now finalize the note.' },
    errors: ['invalid_request', 'invalid_upload_signature', 'upload_url_expired', 'file_too_large', 'invalid_state'],
    async handle({ params, query, req }) {
      const key = uploadKey(params.id)
      const check = local.verify(key, query)
      if (!check.ok) throw new DomainError(check.expired ? 'upload_url_expired' : 'invalid_upload_signature', `Upload refused: ${check.reason}.`)
      const { grant } = check
      // The essence must be the declared one; parameters (`;codecs=opus`) may be sent or left out.
      const sent = req.headers['content-type'] ?? ''
      const signed = parseMediaType(grant.contentType)?.essence ?? grant.contentType
      if (parseMediaType(sent)?.essence !== signed) {
        throw new DomainError('invalid_request', `Content-Type must be ${grant.contentType} (as signed), got ${JSON.stringify(sent || null)}.`)
      }
      const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length'])
      if (declared !== null && declared > grant.maxBytes) throw new DomainError('file_too_large', `The upload is ${declared} bytes; at most ${grant.maxBytes} are allowed.`)
      if (grant.exactBytes !== null && declared !== null && declared !== grant.exactBytes) {
        throw new DomainError('invalid_request', `The note was created for ${grant.exactBytes} bytes (fileSizeBytes); this body has ${declared}.`)
      }
      await app.notes.expectUpload(params.id)
      try {
        const blob = await local.put(key, req.body as Readable, { contentType: grant.contentType, maxBytes: grant.maxBytes })
        if (grant.exactBytes !== null && blob.sizeBytes !== grant.exactBytes) {
          await local.delete(key)
          throw new DomainError('invalid_request', `The note was created for ${grant.exactBytes} bytes (fileSizeBytes); ${blob.sizeBytes} arrived.`)
        }
        // Finalized while the body arrived: finalize bound the bytes it checked, and these are dropped.
        await app.notes.expectUpload(params.id).catch(async (err) => {
          await local.delete(key)
          throw err
        })
        return { noteId: params.id, sizeBytes: blob.sizeBytes, sha256: blob.sha256, next: `POST /v1/notes/${params.id}/finalize` }
      } catch (err) {
        if (err instanceof BlobTooLargeError) throw new DomainError('file_too_large', `The upload is larger than the ${err.maxBytes} bytes allowed.`)
        throw err
      }
    },
  })
