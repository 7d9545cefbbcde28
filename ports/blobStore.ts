// The blob port: uploaded and imported media, by key. A local directory in the embedded
// default; an S3-compatible store at scale. Clients upload straight to it through a presigned
// URL, so the API never buffers a file.
import type { Readable } from 'node:stream'

export interface PresignedPut {
  url: string
  headers: Record<string, string>
  expiresAt: Date
}

export interface StoredBlob {
  sizeBytes: number
  contentType: string
  sha256: string
}

export interface BlobStore {
  /** A URL that accepts exactly one kind of PUT: this key, this content type, at most `maxBytes`, until `expiresAt`. */
  presignPut(key: string, options: { contentType: string; maxBytes: number; exactBytes: number | null; expiresInSeconds: number }): PresignedPut
  /** Streams `body` in; nothing is visible under `key` until the whole body is stored. */
  put(key: string, body: Readable, options: { contentType: string; maxBytes: number }): Promise<StoredBlob>
  stat(key: string): Promise<StoredBlob | null>
  /** Runs `fn` with a local file holding the blob (the file itself, or a temporary copy). */
  withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T>
  /** The blob's bytes, or only those from `start` to `end` inclusive (HTTP range requests). */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>
  delete(key: string): Promise<void>
}

export class BlobTooLargeError extends Error {
  override readonly name = 'BlobTooLargeError'
  constructor(readonly maxBytes: number) {
    super(`the body is larger than the ${maxBytes} bytes allowed`)
  }
}
