// Blobs in an S3-compatible store (AWS S3, MinIO, ...) for the scale-out deployment. The only
// file that imports the AWS SDK.
//
// What is enforced where (see docs/operations.md, "Blob storage"):
// - presignPut signs a real SigV4 PUT URL bound to the bucket, the key, the Content-Type header
//   and the expiry, and to Content-Length when the exact size is known (`exactBytes`): S3 itself
//   refuses another key, type, size or a late PUT (403). A presigned PUT cannot carry a maximum
//   size (only POST policies can), so without `exactBytes` a client may store up to S3's own
//   single-PUT limit (5 GiB); whoever accepts the upload must `stat` it and refuse what is too
//   large, deleting it (NoteCommands.finalize does, with 413 file_too_large).
// - put streams the body in parts (one PutObject below `partSizeBytes`, a multipart upload above),
//   counting bytes as they come: past `maxBytes` it stops, aborts the multipart upload and stores
//   nothing. The SHA-256 of what it stored is kept as object metadata (`x-amz-meta-sha256`).
import { createHash, randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { BlobTooLargeError, isBlobKey, type BlobInfo, type BlobStore, type PresignedPut, type StoredBlob } from '../../ports/blobStore.ts'

export interface S3BlobStoreOptions {
  bucket: string
  region: string
  /** The S3 API the service talks to, e.g. http://minio:9000; null: AWS S3 of `region`. */
  endpoint: string | null
  /** The endpoint written into presigned URLs, where clients reach the store (default: `endpoint`). */
  publicEndpoint: string | null
  /** Path-style URLs (`<endpoint>/<bucket>/<key>`), which MinIO and most self-hosted stores need. */
  forcePathStyle: boolean
  /** null: the SDK's default chain (AWS_* variables, shared config, instance or task role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null
  /** Bodies of at least this size go up as multipart uploads in parts of this size (S3's minimum is 5 MiB). */
  partSizeBytes?: number
  /** Where withLocalFile puts its temporary copies (default: the OS temp dir). */
  tmpDir?: string
  clock?: () => Date
}

export const DEFAULT_PART_SIZE = 8 * 1024 * 1024
const MIN_PART_SIZE = 5 * 1024 * 1024
/** The largest object CopyObject copies in one request: bigger multipart objects keep no hash. */
const MAX_COPY_BYTES = 5 * 1024 ** 3
/** S3 refuses presigned URLs that live longer than a week. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600
const SHA256 = /^[0-9a-f]{64}$/

const statusOf = (err: unknown): number | undefined => (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode
const isNotFound = (err: unknown) => statusOf(err) === 404 || ['NotFound', 'NoSuchKey', 'NoSuchBucket'].includes((err as { name?: string })?.name ?? '')

export class S3BlobStore implements BlobStore {
  private readonly client: S3Client
  private readonly presigner: S3Client
  private readonly bucket: string
  private readonly partSize: number
  private readonly clock: () => Date

  constructor(private readonly options: S3BlobStoreOptions) {
    this.bucket = options.bucket
    this.partSize = Math.max(options.partSizeBytes ?? DEFAULT_PART_SIZE, MIN_PART_SIZE)
    this.clock = options.clock ?? (() => new Date())
    this.client = this.makeClient(options.endpoint)
    this.presigner = options.publicEndpoint && options.publicEndpoint !== options.endpoint ? this.makeClient(options.publicEndpoint) : this.client
  }

  private makeClient(endpoint: string | null): S3Client {
    return new S3Client({
      region: this.options.region,
      ...(endpoint ? { endpoint } : {}),
      forcePathStyle: this.options.forcePathStyle,
      ...(this.options.credentials ? { credentials: this.options.credentials } : {}),
      // Checksums only where S3 requires them: the SDK's default would add a CRC32 of an empty
      // body to presigned PUT URLs, and not every S3-compatible store knows the newer headers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    })
  }

  private check(key: string): string {
    if (!isBlobKey(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`)
    return key
  }

  async presignPut(key: string, o: { contentType: string; maxBytes: number; exactBytes: number | null; expiresInSeconds: number }): Promise<PresignedPut> {
    this.check(key)
    const now = this.clock()
    const expiresIn = Math.min(Math.max(1, o.expiresInSeconds), MAX_PRESIGN_SECONDS)
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: o.contentType, ...(o.exactBytes !== null ? { ContentLength: o.exactBytes } : {}) })
    // The presigner leaves Content-Type out of the signature unless asked: sign it, and the
    // length when it is known, so S3 refuses any other type or size.
    const signableHeaders = new Set(['content-type', ...(o.exactBytes !== null ? ['content-length'] : [])])
    const url = await getSignedUrl(this.presigner, command, { expiresIn, signingDate: now, signableHeaders })
    return { url, headers: { 'Content-Type': o.contentType }, expiresAt: new Date(Math.floor(now.getTime() / 1000) * 1000 + expiresIn * 1000) }
  }

  async put(key: string, body: Readable, { contentType, maxBytes }: { contentType: string; maxBytes: number }): Promise<StoredBlob> {
    this.check(key)
    const hash = createHash('sha256')
    let size = 0
    let pending: Buffer[] = []
    let pendingBytes = 0
    let multipart: { uploadId: string; parts: CompletedPart[] } | null = null
    const sendPart = async (m: { uploadId: string; parts: CompletedPart[] }) => {
      const PartNumber = m.parts.length + 1
      const part = Buffer.concat(pending, pendingBytes)
      pending = []
      pendingBytes = 0
      const r = await this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: m.uploadId, PartNumber, Body: part, ContentLength: part.length }))
      m.parts.push({ PartNumber, ETag: r.ETag })
    }
    try {
      for await (const raw of body) {
        const chunk = typeof raw === 'string' ? Buffer.from(raw) : (raw as Buffer)
        size += chunk.length
        if (size > maxBytes) throw new BlobTooLargeError(maxBytes)
        hash.update(chunk)
        pending.push(chunk)
        pendingBytes += chunk.length
        if (pendingBytes >= this.partSize) {
          if (!multipart) {
            const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }))
            multipart = { uploadId: created.UploadId!, parts: [] }
          }
          await sendPart(multipart)
        }
      }
      const sha256 = hash.digest('hex')
      if (!multipart) {
        const whole = Buffer.concat(pending, pendingBytes)
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: whole, ContentLength: whole.length, ContentType: contentType, Metadata: { sha256 } }))
      } else {
        const m: { uploadId: string; parts: CompletedPart[] } = multipart
        if (pendingBytes > 0) await sendPart(m)
        const done = await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: m.uploadId, MultipartUpload: { Parts: m.parts } }))
        multipart = null
        // The hash is known only now: stamp it on with a copy onto itself (metadata only on S3
        // and MinIO), guarded by the ETag so a PUT that landed meanwhile is left alone.
        if (size <= MAX_COPY_BYTES && done.ETag) {
          await this.client
            .send(
              new CopyObjectCommand({
                Bucket: this.bucket,
                Key: key,
                CopySource: `${this.bucket}/${key}`,
                CopySourceIfMatch: done.ETag,
                MetadataDirective: 'REPLACE',
                ContentType: contentType,
                Metadata: { sha256 },
              }),
            )
            .catch(() => {}) // stat then answers sha256: null, which its callers handle
        }
      }
      return { sizeBytes: size, contentType, sha256 }
    } catch (err) {
      if (multipart) {
        const { uploadId } = multipart
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => {})
      }
      body.destroy()
      throw err
    }
  }

  async stat(key: string): Promise<BlobInfo | null> {
    this.check(key)
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }))
      const sha256 = head.Metadata?.sha256
      return { sizeBytes: head.ContentLength ?? 0, contentType: head.ContentType ?? 'application/octet-stream', sha256: sha256 && SHA256.test(sha256) ? sha256 : null }
    } catch (err) {
      if (isNotFound(err)) return null
      throw err
    }
  }

  /** A server-side copy (CopyObject reads one consistent version of the source). */
  async snapshot(from: string, to: string): Promise<BlobInfo | null> {
    this.check(from)
    this.check(to)
    try {
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: `${this.bucket}/${from.split('/').map(encodeURIComponent).join('/')}` }))
    } catch (err) {
      if (isNotFound(err)) return null
      throw err
    }
    return this.stat(to)
  }

  async withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    const body = await this.read(key)
    const dir = await mkdtemp(join(this.options.tmpDir ?? tmpdir(), 'notes-blob-'))
    try {
      const path = join(dir, 'blob')
      await pipeline(body, createWriteStream(path, { flags: 'wx' }))
      return await fn(path)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    this.check(key)
    const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }))
    return r.Body as Readable
  }

  async delete(key: string): Promise<void> {
    this.check(key)
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }))
  }

  // --- for set-up, tests and tooling, outside the port ---

  /** Creates the bucket when it does not exist (compose creates it with an init step instead). */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }))
    } catch (err) {
      if (!isNotFound(err)) throw err
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }))
    }
  }

  /** Keys of multipart uploads begun and neither completed nor aborted, under `prefix`. */
  async incompleteUploads(prefix = ''): Promise<string[]> {
    const r = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix }))
    return (r.Uploads ?? []).map((u) => u.Key!)
  }

  /** Keys of the objects under `prefix`. */
  async list(prefix = ''): Promise<string[]> {
    const keys: string[] = []
    let token: string | undefined
    do {
      const r = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }))
      for (const o of r.Contents ?? []) keys.push(o.Key!)
      token = r.IsTruncated ? r.NextContinuationToken : undefined
    } while (token)
    return keys
  }

  /** Deletes every object and pending upload, then the bucket itself (test buckets). */
  async destroyBucket(): Promise<void> {
    const r = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket })).catch((err) => (isNotFound(err) ? null : Promise.reject(err)))
    if (!r) return
    for (const u of r.Uploads ?? []) await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key!, UploadId: u.UploadId! })).catch(() => {})
    for (const key of await this.list()) await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }))
    await this.client.send(new DeleteBucketCommand({ Bucket: this.bucket }))
  }

  close(): void {
    this.client.destroy()
    if (this.presigner !== this.client) this.presigner.destroy()
  }
}

/** A bucket name nobody else uses (tests). */
export const uniqueBucketName = (prefix = 'notes-test') => `${prefix}-${randomUUID().replace(/-/g, '').slice(0, 16)}`
