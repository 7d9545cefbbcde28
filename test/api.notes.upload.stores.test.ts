// The direct-upload flow end to end with each blob store, over real HTTP: create the note, PUT
// the bytes to the presigned `upload.url` exactly as a client would (to this service's upload
// route with the local store, straight to the bucket with S3), finalize. And the size rules that
// a presigned S3 URL cannot carry, which finalize enforces for both stores.
// S3 runs when S3_ENDPOINT is set (npm test starts MinIO); the local store always runs.
import t, { type Test } from 'tap'
import { createHash, randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { request as httpRequest } from 'node:http'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { wavBytes } from './support/media.ts'
import { S3_NOT_SET, listeningService, s3Bucket, s3TestServer } from './support/blobStores.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'
import { usageDecider, usageStream } from '../domain/usage/usage.ts'
import { blobDir } from '../adapters/local/blobStore.ts'
import { PLAN_LIMITS } from '../domain/credits/plans.ts'
import type { Caller } from '../commands/context.ts'

const json = { 'content-type': 'application/json' }
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')
const readAll = async (r: Readable) => {
  const chunks: Buffer[] = []
  for await (const c of r) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}
const put = async (url: string, body: Buffer, contentType: string) => {
  const r = await fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: new Uint8Array(body) })
  await r.arrayBuffer()
  return r.status
}

/** A PUT whose body goes out in pieces when the test says so: a client on a slow line. */
function slowPut(url: string, body: Buffer, contentType: string) {
  const u = new URL(url)
  const req = httpRequest(u, { method: 'PUT', headers: { 'content-type': contentType, 'content-length': String(body.length) } })
  const answer = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => (res.resume(), res.on('end', () => resolve(res.statusCode ?? 0))))
    req.on('error', reject)
  })
  let offset = 0
  return {
    sent: (n: number) => new Promise<void>((resolve) => req.write(body.subarray(0, (offset = n)), () => resolve())),
    finish: () => (req.end(body.subarray(offset)), answer),
  }
}
const partials = async (dataDir: string, noteId: string) => (await readdir(join(blobDir(dataDir), 'uploads')).catch(() => [] as string[])).filter((f) => f.startsWith(`${noteId}.`) && f.endsWith('.partial'))
const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

t.test('local store', async (t) => {
  await suite(t, 'local', {}, (base, noteId) => `${base}/uploads/${noteId}?`)
})

t.test('S3 store', async (t) => {
  const server = s3TestServer()
  if (!server) {
    console.error(S3_NOT_SET)
    t.skip('S3_ENDPOINT not set: the S3 flow needs it (npm test starts MinIO and sets it)', () => {})
    return
  }
  const b = await s3Bucket(server)
  t.teardown(b.destroy)
  await suite(t, 's3', b.env, (_base, noteId) => `${server.endpoint}/${b.bucket}/uploads/${noteId}?`)
})

async function suite(t: Test, backend: 'local' | 's3', env: Record<string, string>, expectUrl: (baseUrl: string, noteId: string) => string) {
  const s = await listeningService({ env })
  t.teardown(s.close)
  const a = await s.account('pro')
  const create = (body: Record<string, unknown>) => s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify(body) })
  const finalize = (noteId: string) => s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })
  const stage = async (noteId: string) => (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json().progress?.stage
  const noteState = async (noteId: string) => {
    const { state } = await s.services.handler.load(noteStream.of(noteId), noteDecider)
    if (!state.exists) throw new Error(`no note ${noteId}`)
    return state
  }
  const received = async (noteId: string) => (await noteState(noteId)).received

  t.test('create, PUT to upload.url over HTTP, finalize: the note is queued with the bytes’ duration and hash', async (t) => {
    const wav = wavBytes(90)
    const r = await create({ filename: 'meeting.wav', contentType: 'audio/wav', fileSizeBytes: wav.length })
    t.equal(r.statusCode, 202)
    const { noteId, upload } = r.json()
    t.ok(upload.url.startsWith(expectUrl(s.baseUrl, noteId)), `upload.url points at the ${backend} store: ${upload.url.slice(0, 80)}…`)
    t.same(upload.headers, { 'Content-Type': 'audio/wav' })

    t.ok((await put(upload.url, wav, 'audio/mpeg')) >= 400, 'another content type is refused')
    t.ok((await put(upload.url, wav.subarray(0, wav.length - 2), 'audio/wav')) >= 400, 'another size is refused')
    t.equal((await finalize(noteId)).statusCode, 409, 'nothing was stored: finalize still waits for the bytes')

    t.equal(await put(upload.url, wav, upload.headers['Content-Type']), 200, 'the PUT a client makes with upload.url and upload.headers')
    const done = await finalize(noteId)
    t.equal(done.statusCode, 202, done.body)
    const note = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json()
    t.match(note, { status: 'processing', durationSeconds: 90, progress: { stage: 'queued' } })
    const bound = await received(noteId)
    t.match(bound, { blobKey: new RegExp(`^uploads/${noteId}\\.bound-[0-9a-f-]{36}$`), sizeBytes: wav.length, contentType: 'audio/wav', sha256: sha(wav) }, 'the recorded SHA-256 is the bytes’')
    t.equal(sha(await readAll(await s.services.blobs.read(bound!.blobKey))), sha(wav), 'the note keeps its own copy of the bytes it checked')
    t.equal(await s.services.blobs.stat(`uploads/${noteId}`), null, 'and the upload key is emptied')
  })

  t.test('bytes larger than the note was created for are deleted at finalize with 413, and the note waits for a PUT that fits', async (t) => {
    const wav = wavBytes(478 / 8000) // exactly 1000 bytes
    t.equal(wav.length, 1000)
    const { noteId, upload } = (await create({ filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: 1000 })).json()
    // What a store that cannot bind a size would let through.
    await s.services.blobs.put(`uploads/${noteId}`, Readable.from([wavBytes(1)]), { contentType: 'audio/wav', maxBytes: 1e6 })
    const big = await finalize(noteId)
    t.equal(big.statusCode, 413)
    t.match(big.json(), { error: 'file_too_large', maxBytes: 1000, message: /1000 bytes.*deleted/ })
    t.equal(await s.services.blobs.stat(`uploads/${noteId}`), null, 'the bytes are gone')
    t.equal(await stage(noteId), 'awaiting_upload')

    await s.services.blobs.put(`uploads/${noteId}`, Readable.from([wav.subarray(0, 600)]), { contentType: 'audio/wav', maxBytes: 1e6 })
    const small = await finalize(noteId)
    t.equal(small.statusCode, 400)
    t.match(small.json(), { error: 'invalid_request', message: /1000 bytes.*600/ })
    t.equal(await s.services.blobs.stat(`uploads/${noteId}`), null)

    t.equal(await put(upload.url, wav, 'audio/wav'), 200)
    t.equal((await finalize(noteId)).statusCode, 202, 'the right bytes are taken')
  })

  t.test('without a declared size, the plan’s largest upload holds: at the PUT (local) or at finalize (S3)', async (t) => {
    const free = await s.account('free')
    const caller: Caller = { accountId: free.accountId, plan: 'free', keyId: null, requestId: randomUUID(), via: 'mcp' }
    const max = PLAN_LIMITS.free.maxFileBytes
    const { noteId, upload } = await s.services.notes.create(caller, { filename: 'huge.wav', contentType: 'audio/wav' })
    const status = await put(upload!.url, Buffer.alloc(max + 1), 'audio/wav')
    if (backend === 'local') {
      t.equal(status, 413, 'the local upload route refuses the body')
    } else {
      t.equal(status, 200, 'S3 cannot bind a maximum to a presigned PUT and stores it')
      t.equal((await s.services.blobs.stat(`uploads/${noteId}`))?.sizeBytes, max + 1)
    }
    await t.rejects(s.services.notes.finalize(caller, noteId, {}), { code: backend === 'local' ? 'invalid_state' : 'file_too_large' })
    t.equal(await s.services.blobs.stat(`uploads/${noteId}`), null, 'nothing is kept')
    t.equal((await noteState(noteId)).phase, 'awaiting_upload', 'the note waits for a PUT that fits')
  })

  t.test('a slow PUT that began before finalize and ends after it changes nothing that is transcribed (issue 11, item 8)', async (t) => {
    const short = wavBytes(2)
    const long = wavBytes(600) // 9.6 MB: ten minutes
    const { noteId, upload } = (await create({ filename: 'race.wav', contentType: 'audio/wav' })).json()
    t.equal(await put(upload.url, short, 'audio/wav'), 200)

    // The second PUT starts, sends its first chunk, and stalls.
    const slow = slowPut(upload.url, long, 'audio/wav')
    await slow.sent(64 * 1024)
    if (backend === 'local') await until('the upload route to be receiving', async () => (await partials(s.config.dataDir, noteId)).length > 0)

    const done = await finalize(noteId)
    t.equal(done.statusCode, 202, done.body)
    const checked = await received(noteId)
    t.match(checked, { sizeBytes: short.length, sha256: sha(short), durationSeconds: 2 })

    // Now the rest of the long body arrives.
    const status = await slow.finish()
    if (backend === 'local') t.equal(status, 409, 'the local route refuses a PUT that ends after finalize')
    else t.equal(status, 200, 'a presigned S3 PUT cannot be stopped: it lands on the upload key')
    t.same(await received(noteId), checked, 'the note still names the bytes finalize checked')
    t.equal(sha(await readAll(await s.services.blobs.read(checked!.blobKey))), sha(short), 'and those bytes are unchanged: the transcription reads the short file')
    const usage = (await s.services.handler.load(usageStream.of(a.accountId), usageDecider)).state
    t.equal(usage.minutesByNote[noteId], 1, 'one minute reserved, as measured')
    t.match(await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers }), { statusCode: 200 })
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json().durationSeconds, 2)
    if (backend === 'local') t.same(await partials(s.config.dataDir, noteId), [], 'nothing of the late PUT is left')
  })

  t.test('the upload route is served, and in the contract, only with the local store', async (t) => {
    const doc = (await s.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    const served = s.app.servedRoutes.some((r) => r.url === '/uploads/:id')
    t.equal(served, backend === 'local')
    t.equal('/uploads/{id}' in doc.paths, backend === 'local')
    const r = await s.inject({ method: 'PUT', url: `/uploads/${randomUUID()}?sig=x`, headers: { 'content-type': 'audio/wav' }, payload: Buffer.alloc(10) })
    t.equal(r.statusCode, backend === 'local' ? 403 : 404)
  })
}
