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

/**
 * What `stat` knows without reading the bytes. `sha256` is null when the store holds no hash of
 * them: an S3 object PUT by a client through a presigned URL (S3 keeps no SHA-256 of a plain
 * PUT); whoever needs it then hashes the bytes it reads anyway (finalize does, while probing).
 */
export interface BlobInfo {
  sizeBytes: number
  contentType: string
  sha256: string | null
}

/**
 * Keys every adapter accepts: letters, digits and `._/-`, starting with a letter or digit, at
 * most 201 characters, no `..`. Slashes make folders (`uploads/<noteId>`, `media/<noteId>`).
 */
export const BLOB_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$/
export const isBlobKey = (key: string): boolean => BLOB_KEY.test(key) && !key.includes('..') && !key.includes('//') && !key.endsWith('/')

export interface BlobStore {
  /**
   * A URL that accepts exactly one kind of PUT: this key, this content type, until `expiresAt`,
   * and exactly `exactBytes` when given. `maxBytes` (without `exactBytes`) is enforced by the
   * URL where the store can (the local store refuses a longer body); S3 cannot bind a maximum to
   * a presigned PUT, so whoever accepts the upload must `stat` it and refuse what is too large
   * (finalize does).
   */
  presignPut(key: string, options: { contentType: string; maxBytes: number; exactBytes: number | null; expiresInSeconds: number }): Promise<PresignedPut>
  /**
   * Streams `body` in; nothing is visible under `key` until the whole body is stored, and a new
   * put replaces the blob whole. Past `maxBytes` it rejects with BlobTooLargeError and stores
   * nothing (an earlier blob under the key stays as it was).
   */
  put(key: string, body: Readable, options: { contentType: string; maxBytes: number }): Promise<StoredBlob>
  stat(key: string): Promise<BlobInfo | null>
  /**
   * Copies the blob under `from`, exactly as it is at this moment, to `to`, a key nothing else
   * writes: a put to `from` that lands later (a client's presigned PUT still running) never
   * changes `to`. Null, and nothing under `to`, when there is no blob under `from`. This is how
   * finalize binds the bytes it checked to the note (NoteCommands.finalize).
   */
  snapshot(from: string, to: string): Promise<BlobInfo | null>
  /** Runs `fn` with a local file holding the blob (the file itself, or a temporary copy removed afterwards). */
  withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T>
  /** The blob's bytes, or only those from `start` to `end` inclusive (HTTP range requests); rejects when there is no such blob. */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>
  /** Deleting a missing blob is not an error. */
  delete(key: string): Promise<void>
}

export class BlobTooLargeError extends Error {
  override readonly name = 'BlobTooLargeError'
  constructor(readonly maxBytes: number) {
    super(`the body is larger than the ${maxBytes} bytes allowed`)
  }
}

/** What a presigned upload URL allows: the content type, the size rule. */
export interface PutGrant {
  contentType: string
  maxBytes: number
  exactBytes: number | null
}

export type SignatureCheck = { ok: true; grant: PutGrant } | { ok: false; expired: boolean; reason: string }

/**
 * A store that serves its own presigned upload URLs (the local directory; S3 serves its own): it
 * checks a URL's signature and takes the streamed body.
 */
export interface SignedUploadTarget {
  verify(key: string, query: Record<string, unknown>): SignatureCheck
  put(key: string, body: Readable, options: { contentType: string; maxBytes: number }): Promise<StoredBlob>
  delete(key: string): Promise<void>
}
