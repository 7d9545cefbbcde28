// One conformance suite for every BlobStore adapter (the local directory, S3): the same tests,
// so the core can rely on the port whichever store is configured. Presigned URLs are tried with
// real HTTP PUTs against whatever serves them (this service's upload route, or the S3 server).
import type { Test } from 'tap'
import { createHash, randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { Readable } from 'node:stream'
import { BlobTooLargeError, type BlobStore } from '../../ports/blobStore.ts'

export interface BlobStoreHarness {
  store: BlobStore
  /** The same backend seen through another clock (to presign URLs that are already expired). */
  at(clock: () => Date): BlobStore
  /**
   * Keys a presigned PUT can really be made to: any key on S3; on the local store only the upload
   * slots of notes waiting for their bytes, since its upload endpoint is the notes' one.
   */
  uploadKeys(n: number): Promise<string[]>
  /** Anything half-written left behind for `key`: temporary files, unfinished multipart uploads. */
  leftovers(key: string): Promise<string[]>
  cleanup(): Promise<void>
}

export type BlobStoreFactory = () => Promise<BlobStoreHarness>

const MiB = 1024 * 1024
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')
const bytes = (n: number, seed = 1) => {
  const b = Buffer.alloc(n)
  let x = seed
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    b[i] = x >> 16
  }
  return b
}
/** A body that arrives in pieces, as an HTTP request does. */
const streamOf = (b: Buffer, piece = 256 * 1024) => {
  const parts: Buffer[] = []
  for (let i = 0; i < b.length; i += piece) parts.push(b.subarray(i, i + piece))
  return Readable.from(parts.length ? parts : [Buffer.alloc(0)])
}
const readAll = async (r: Readable) => {
  const chunks: Buffer[] = []
  for await (const c of r) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}
const httpPut = async (url: string, body: Buffer, contentType: string) => {
  const r = await fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: new Uint8Array(body) })
  await r.arrayBuffer()
  return r.status
}
/** The same presigned URL aimed at another key (both adapters put the key at the end of the path). */
const retarget = (url: string, from: string, to: string) => {
  const u = new URL(url)
  if (!u.pathname.endsWith(`/${from}`)) throw new Error(`the presigned URL ${u.pathname} does not end with its key ${from}`)
  u.pathname = u.pathname.slice(0, -from.length) + to
  return u.toString()
}

export function blobStoreConformance(t: Test, name: string, factory: BlobStoreFactory): void {
  t.test(`BlobStore conformance: ${name}`, async (t) => {
    const h = await factory()
    t.teardown(h.cleanup)
    const { store } = h
    const prefix = `conformance/${randomUUID()}`

    t.test('put, stat, read, delete', async (t) => {
      const key = `${prefix}/basic.bin`
      const body = bytes(300_000)
      t.equal(await store.stat(key), null, 'nothing before the put')
      const stored = await store.put(key, streamOf(body), { contentType: 'audio/wav', maxBytes: body.length })
      t.same(stored, { sizeBytes: body.length, contentType: 'audio/wav', sha256: sha(body) }, 'put answers the size, type and SHA-256 of what it stored')
      t.same(await store.stat(key), stored, 'stat answers the same')
      t.ok((await store.read(key)) instanceof Readable)
      t.ok((await readAll(await store.read(key))).equals(body), 'read gives the bytes back')
      t.ok((await readAll(await store.read(key, { start: 1000, end: 1999 }))).equals(body.subarray(1000, 2000)), 'a range read gives exactly those bytes (end inclusive)')
      t.ok((await readAll(await store.read(key, { start: body.length - 1, end: body.length - 1 }))).equals(body.subarray(body.length - 1)), 'the last byte alone')
      await store.delete(key)
      t.equal(await store.stat(key), null, 'gone after delete')
      await t.rejects(store.read(key), 'reading a deleted blob rejects')
      await t.resolves(store.delete(key), 'deleting a missing blob is not an error')
    })

    t.test('an empty body is a blob of 0 bytes', async (t) => {
      const key = `${prefix}/empty.bin`
      t.match(await store.put(key, Readable.from([]), { contentType: 'application/octet-stream', maxBytes: 10 }), { sizeBytes: 0, sha256: sha(Buffer.alloc(0)) })
      t.equal((await store.stat(key))?.sizeBytes, 0)
      t.equal((await readAll(await store.read(key))).length, 0)
    })

    t.test('a second put replaces the blob whole', async (t) => {
      const key = `${prefix}/overwrite.bin`
      await store.put(key, streamOf(bytes(200_000, 1)), { contentType: 'audio/wav', maxBytes: MiB })
      const second = bytes(1234, 2)
      await store.put(key, streamOf(second), { contentType: 'audio/mpeg', maxBytes: MiB })
      t.same(await store.stat(key), { sizeBytes: second.length, contentType: 'audio/mpeg', sha256: sha(second) })
      t.ok((await readAll(await store.read(key))).equals(second))
    })

    t.test('a body past maxBytes is refused and leaves nothing, and an earlier blob stays as it was', async (t) => {
      const key = `${prefix}/too-large.bin`
      // Large enough that an S3 store has begun a multipart upload before the limit is reached.
      const body = bytes(8 * MiB)
      await t.rejects(store.put(key, streamOf(body, MiB), { contentType: 'audio/wav', maxBytes: 7.5 * MiB }), BlobTooLargeError)
      t.equal(await store.stat(key), null, 'nothing stored')
      t.same(await h.leftovers(key), [], 'no partial file or unfinished upload left behind')

      const kept = bytes(1000, 3)
      await store.put(key, streamOf(kept), { contentType: 'audio/wav', maxBytes: 1000 })
      await t.rejects(store.put(key, streamOf(bytes(1001)), { contentType: 'audio/wav', maxBytes: 1000 }), BlobTooLargeError, 'one byte over is refused')
      t.same(await store.stat(key), { sizeBytes: 1000, contentType: 'audio/wav', sha256: sha(kept) })
      t.ok((await readAll(await store.read(key))).equals(kept), 'the earlier blob is untouched')
      t.same(await h.leftovers(key), [])
    })

    t.test('large bodies stream in (multipart on S3) and come back whole', async (t) => {
      const key = `${prefix}/large.bin`
      const body = bytes(11 * MiB + 17)
      const stored = await store.put(key, streamOf(body, 512 * 1024), { contentType: 'video/mp4', maxBytes: 11 * MiB + 17 })
      t.same(stored, { sizeBytes: body.length, contentType: 'video/mp4', sha256: sha(body) })
      t.same(await store.stat(key), stored, 'stat knows the SHA-256 of what put stored')
      t.equal(sha(await readAll(await store.read(key))), sha(body))
      t.same(await h.leftovers(key), [])
    })

    t.test('snapshot keeps the bytes as they were: a later put to the source leaves the copy alone', async (t) => {
      const from = `${prefix}/snap-source.bin`
      const to = `${prefix}/snap-copy.bin`
      t.equal(await store.snapshot(from, to), null, 'no source, no copy')
      t.equal(await store.stat(to), null)
      const first = bytes(300_000, 7)
      await store.put(from, streamOf(first), { contentType: 'audio/wav', maxBytes: MiB })
      const snap = await store.snapshot(from, to)
      t.match(snap, { sizeBytes: first.length, contentType: 'audio/wav' })
      t.ok(snap!.sha256 === null || snap!.sha256 === sha(first), 'a hash, when known, is the copy’s')
      const second = bytes(5000, 8)
      await store.put(from, streamOf(second), { contentType: 'audio/mpeg', maxBytes: MiB })
      t.ok((await readAll(await store.read(to))).equals(first), 'the copy keeps the first bytes')
      t.match(await store.stat(to), { sizeBytes: first.length })
      t.ok((await readAll(await store.read(from))).equals(second), 'the source has the new ones')
      await store.delete(from)
      t.ok((await readAll(await store.read(to))).equals(first), 'and the copy outlives the source')
      await store.delete(to)
      t.equal(await store.stat(to), null)
    })

    t.test('withLocalFile gives a file with the bytes, and keeps no copy afterwards', async (t) => {
      const key = `${prefix}/local-file.bin`
      const body = bytes(500_000, 4)
      await store.put(key, streamOf(body), { contentType: 'audio/wav', maxBytes: MiB })
      let seen = ''
      const answer = await store.withLocalFile(key, async (path) => {
        seen = path
        t.ok(readFileSync(path).equals(body), 'the file holds the blob')
        return 42
      })
      t.equal(answer, 42, 'the callback’s answer is passed on')
      // A temporary copy is gone now; a store that lent its own file still has it until delete.
      await store.delete(key)
      t.notOk(existsSync(seen), 'no file is left once the blob is deleted')

      await store.put(key, streamOf(body), { contentType: 'audio/wav', maxBytes: MiB })
      let failedPath = ''
      await t.rejects(
        store.withLocalFile(key, async (path) => {
          failedPath = path
          throw new Error('the callback failed')
        }),
        { message: 'the callback failed' },
      )
      await store.delete(key)
      t.notOk(existsSync(failedPath), 'nor when the callback throws')
      await t.rejects(store.withLocalFile(`${prefix}/missing.bin`, async () => 1), 'a missing blob rejects')
    })

    t.test('keys with slashes, and keys that are refused', async (t) => {
      const key = `${prefix}/deep/er/still-deeper/file.name-1_x.bin`
      const body = bytes(5000, 5)
      await store.put(key, streamOf(body), { contentType: 'audio/ogg', maxBytes: body.length })
      t.match(await store.stat(key), { sizeBytes: 5000, contentType: 'audio/ogg' })
      t.equal(await store.stat(`${prefix}/deep/er`), null, 'a folder of keys is not a blob')
      t.ok((await readAll(await store.read(key))).equals(body))
      await store.delete(key)
      t.equal(await store.stat(key), null)
      for (const bad of ['', '/abs', `${prefix}/../escape`, `${prefix}//double`, `${prefix}/`, `${prefix}/sp ace`, `${prefix}/ü`, `${'a'.repeat(202)}`]) {
        await t.rejects(store.put(bad, streamOf(body), { contentType: 'audio/ogg', maxBytes: body.length }), `put ${JSON.stringify(bad.slice(0, 40))}`)
        await t.rejects(store.stat(bad), `stat ${JSON.stringify(bad.slice(0, 40))}`)
        await t.rejects(store.presignPut(bad, { contentType: 'audio/ogg', maxBytes: 10, exactBytes: null, expiresInSeconds: 60 }))
      }
    })

    t.test('a presigned PUT stores the bytes for its key, type and size', async (t) => {
      const [key] = await h.uploadKeys(1)
      const body = bytes(64_000, 6)
      const signed = await store.presignPut(key!, { contentType: 'audio/wav', maxBytes: body.length, exactBytes: body.length, expiresInSeconds: 300 })
      t.same(signed.headers, { 'Content-Type': 'audio/wav' }, 'the client is told which headers to send')
      const ttl = signed.expiresAt.getTime() - Date.now()
      t.ok(ttl > 290_000 && ttl <= 300_000, `expiresAt is the expiry (${ttl} ms away)`)
      t.equal(await httpPut(signed.url, body, 'audio/wav'), 200)
      t.match(await store.stat(key!), { sizeBytes: body.length, contentType: 'audio/wav' })
      const info = await store.stat(key!)
      t.ok(info!.sha256 === null || info!.sha256 === sha(body), 'stat’s SHA-256, when the store has one, is the body’s')
      t.ok((await readAll(await store.read(key!))).equals(body))
      const again = bytes(64_000, 7)
      t.equal(await httpPut(signed.url, again, 'audio/wav'), 200, 'a second PUT with the same URL replaces the bytes')
      t.ok((await readAll(await store.read(key!))).equals(again))
    })

    t.test('a presigned PUT without an exact size takes any size up to the store’s own checks', async (t) => {
      const [key] = await h.uploadKeys(1)
      const body = bytes(10_000, 8)
      const signed = await store.presignPut(key!, { contentType: 'video/mp4', maxBytes: 20_000, exactBytes: null, expiresInSeconds: 60 })
      t.equal(await httpPut(signed.url, body, 'video/mp4'), 200)
      t.match(await store.stat(key!), { sizeBytes: 10_000, contentType: 'video/mp4' })
    })

    t.test('a presigned PUT is refused for another content type, another size, another key, or once expired', async (t) => {
      const [key, other] = await h.uploadKeys(2)
      const body = bytes(32_000, 9)
      const signed = await store.presignPut(key!, { contentType: 'audio/wav', maxBytes: body.length, exactBytes: body.length, expiresInSeconds: 300 })
      const refused = (status: number) => status >= 400 && status < 500

      t.ok(refused(await httpPut(signed.url, body, 'audio/mpeg')), 'another content type')
      t.ok(refused(await httpPut(signed.url, body, 'application/octet-stream')), 'a non-media content type')
      t.ok(refused(await httpPut(signed.url, Buffer.concat([body, Buffer.alloc(1)]), 'audio/wav')), 'one byte more than signed')
      t.ok(refused(await httpPut(signed.url, body.subarray(1), 'audio/wav')), 'one byte less than signed')
      t.equal(await store.stat(key!), null, 'none of them stored anything')

      t.ok(refused(await httpPut(retarget(signed.url, key!, other!), body, 'audio/wav')), 'the URL of one key does not open another')
      t.equal(await store.stat(other!), null)

      const past = h.at(() => new Date(Date.now() - 2 * 3600_000))
      const expired = await past.presignPut(key!, { contentType: 'audio/wav', maxBytes: body.length, exactBytes: body.length, expiresInSeconds: 60 })
      t.ok(expired.expiresAt.getTime() < Date.now(), 'signed two hours ago for one minute')
      t.ok(refused(await httpPut(expired.url, body, 'audio/wav')), 'an expired URL')
      t.equal(await store.stat(key!), null)

      const tampered = new URL(signed.url)
      const sigParam = ['sig', 'X-Amz-Signature'].find((k) => tampered.searchParams.has(k))!
      tampered.searchParams.set(sigParam, tampered.searchParams.get(sigParam)!.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')))
      t.ok(refused(await httpPut(tampered.toString(), body, 'audio/wav')), 'a changed signature')
      t.equal(await store.stat(key!), null)

      t.equal(await httpPut(signed.url, body, 'audio/wav'), 200, 'the URL still works as signed')
      t.equal((await store.stat(key!))?.sizeBytes, body.length)
    })
  })
}
