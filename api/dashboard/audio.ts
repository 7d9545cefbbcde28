// A stored blob over HTTP with byte ranges (RFC 9110 section 14): what an <audio> element needs
// to seek without downloading the whole file. One range per request (what media players ask
// for); several ranges, or a malformed header, get the whole body, as the RFC allows.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { BlobStore } from '../../ports/blobStore.ts'

export type ByteRange = { start: number; end: number }

/** The one range a `Range` header asks for, null to send everything, or 'unsatisfiable'. */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  const m = /^bytes=(\d*)-(\d*)$/.exec((header ?? '').trim())
  if (!m || (m[1] === '' && m[2] === '')) return null
  if (m[1] === '') {
    // bytes=-N: the last N bytes.
    const n = Number(m[2])
    if (n === 0) return 'unsatisfiable'
    return size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - n), end: size - 1 }
  }
  const start = Number(m[1])
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (!Number.isSafeInteger(start) || start >= size || end < start) return 'unsatisfiable'
  return { start, end }
}

export async function sendBlobWithRanges(req: FastifyRequest, reply: FastifyReply, blobs: BlobStore, blob: { blobKey: string; contentType: string; sizeBytes: number }) {
  const size = blob.sizeBytes
  reply.header('accept-ranges', 'bytes').header('content-type', blob.contentType).header('x-content-type-options', 'nosniff')
  const range = parseRange(req.headers.range, size)
  if (range === 'unsatisfiable') return reply.code(416).header('content-range', `bytes */${size}`).send()
  if (range === null) return reply.code(200).header('content-length', String(size)).send(await blobs.read(blob.blobKey))
  return reply
    .code(206)
    .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
    .header('content-length', String(range.end - range.start + 1))
    .send(await blobs.read(blob.blobKey, range))
}
