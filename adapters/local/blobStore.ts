// Blobs in a local directory (the embedded default), with presigned PUT URLs that this service
// itself serves (`PUT <publicBaseUrl>/<key>`; upload keys are `uploads/<noteId>`, see
// api/routes/uploads.ts). The signature is an HMAC over the
// method, key, content type, size rule and expiry, so a URL cannot be bent to another note, type,
// size or time. Files are written to a temporary name and renamed when complete.
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { copyFile, link, mkdir, rename, rm, stat, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { BlobTooLargeError, isBlobKey, type BlobInfo, type BlobStore, type PresignedPut, type PutGrant, type SignatureCheck, type SignedUploadTarget, type StoredBlob } from '../../ports/blobStore.ts'

export interface LocalBlobStoreOptions {
  dir: string
  /** Where clients reach this service, e.g. http://127.0.0.1:3000 */
  publicBaseUrl: string
  signingSecret: string
  clock?: () => Date
}

export class LocalBlobStore implements BlobStore, SignedUploadTarget {
  private readonly root: string
  private readonly clock: () => Date
  constructor(private readonly options: LocalBlobStoreOptions) {
    this.root = resolve(options.dir)
    this.clock = options.clock ?? (() => new Date())
  }

  private pathOf(key: string): string {
    if (!isBlobKey(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`)
    const p = resolve(this.root, key)
    if (!p.startsWith(this.root + sep)) throw new Error(`blob key escapes the blob directory: ${key}`)
    return p
  }

  private sign(key: string, g: PutGrant, exp: number): string {
    return createHmac('sha256', this.options.signingSecret)
      .update(['PUT', key, g.contentType, String(g.maxBytes), String(g.exactBytes ?? ''), String(exp)].join('\n'))
      .digest('base64url')
  }

  async presignPut(key: string, o: { contentType: string; maxBytes: number; exactBytes: number | null; expiresInSeconds: number }): Promise<PresignedPut> {
    this.pathOf(key)
    const exp = Math.floor(this.clock().getTime() / 1000) + o.expiresInSeconds
    const grant = { contentType: o.contentType, maxBytes: o.maxBytes, exactBytes: o.exactBytes }
    const q = new URLSearchParams({ ct: o.contentType, max: String(o.maxBytes), exp: String(exp), sig: this.sign(key, grant, exp) })
    if (o.exactBytes !== null) q.set('size', String(o.exactBytes))
    return {
      url: `${this.options.publicBaseUrl}/${key}?${q}`,
      headers: { 'Content-Type': o.contentType },
      expiresAt: new Date(exp * 1000),
    }
  }

  /** Checks a presigned URL's query against its key; says why when it does not hold. */
  verify(key: string, query: Record<string, unknown>): SignatureCheck {
    const str = (k: string) => (typeof query[k] === 'string' ? (query[k] as string) : null)
    const ct = str('ct')
    const max = Number(str('max'))
    const exp = Number(str('exp'))
    const sig = str('sig')
    const size = str('size')
    if (!ct || !sig || !Number.isSafeInteger(max) || !Number.isSafeInteger(exp)) return { ok: false, expired: false, reason: 'the upload URL is incomplete; use upload.url exactly as returned' }
    const grant: PutGrant = { contentType: ct, maxBytes: max, exactBytes: size === null ? null : Number(size) }
    const expected = Buffer.from(this.sign(key, grant, exp))
    const given = Buffer.from(sig)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, expired: false, reason: 'the upload URL signature does not match' }
    if (exp * 1000 < this.clock().getTime()) return { ok: false, expired: true, reason: 'the upload URL has expired; create a new note to get a fresh one' }
    return { ok: true, grant }
  }

  async put(key: string, body: Readable, { contentType, maxBytes }: { contentType: string; maxBytes: number }): Promise<StoredBlob> {
    const path = this.pathOf(key)
    await mkdir(dirname(path), { recursive: true })
    const tmp = `${path}.${randomUUID()}.partial`
    const hash = createHash('sha256')
    let size = 0
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length
        if (size > maxBytes) return done(new BlobTooLargeError(maxBytes))
        hash.update(chunk)
        done(null, chunk)
      },
    })
    try {
      await pipeline(body, meter, createWriteStream(tmp, { flags: 'wx' }))
      const blob: StoredBlob = { sizeBytes: size, contentType, sha256: hash.digest('hex') }
      // The inode ties the meta file to this very file (the rename keeps it): see snapshot.
      await writeFile(`${tmp}.meta`, JSON.stringify({ ...blob, ino: (await stat(tmp)).ino }))
      await rename(`${tmp}.meta`, `${path}.meta`)
      await rename(tmp, path)
      return blob
    } catch (err) {
      await rm(tmp, { force: true })
      await rm(`${tmp}.meta`, { force: true })
      throw err
    }
  }

  async stat(key: string): Promise<BlobInfo | null> {
    const path = this.pathOf(key)
    try {
      const [meta, st] = await Promise.all([readFile(`${path}.meta`, 'utf8'), stat(path)])
      const { sizeBytes, contentType, sha256 } = JSON.parse(meta) as StoredBlob
      // The meta file is renamed first: a size that disagrees is an interrupted overwrite.
      return st.size === sizeBytes ? { sizeBytes, contentType, sha256 } : null
    } catch {
      return null
    }
  }

  /**
   * A hard link: the very bytes of `from` now, which a later put (a rename over `from`) leaves
   * alone. The meta file is trusted only when it names the linked file's inode; otherwise a put
   * landed between its two renames, and the hash is left to the caller (sha256: null).
   */
  async snapshot(from: string, to: string): Promise<BlobInfo | null> {
    const src = this.pathOf(from)
    const dst = this.pathOf(to)
    await mkdir(dirname(dst), { recursive: true })
    try {
      await link(src, dst)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return null
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw err
      await copyFile(src, dst) // no hard links here: a copy of one open file, as consistent
    }
    const st = await stat(dst)
    const meta = await readFile(`${src}.meta`, 'utf8')
      .then((m) => JSON.parse(m) as StoredBlob & { ino?: number })
      .catch(() => null)
    const info: BlobInfo = { sizeBytes: st.size, contentType: meta?.contentType ?? 'application/octet-stream', sha256: meta && meta.ino === st.ino && meta.sizeBytes === st.size ? meta.sha256 : null }
    await writeFile(`${dst}.meta`, JSON.stringify({ ...info, ino: st.ino }))
    return info
  }

  async withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    const path = this.pathOf(key)
    await stat(path)
    return fn(path)
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const path = this.pathOf(key)
    await stat(path)
    return createReadStream(path, range)
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key)
    await rm(path, { force: true })
    await rm(`${path}.meta`, { force: true })
  }
}

export const blobDir = (dataDir: string) => join(dataDir, 'blobs')
