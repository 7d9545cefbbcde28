// The pipeline with its blobs on S3 (MinIO, which `npm test` starts): an upload PUT to its S3
// presigned URL is transcribed by the worker (which reads it back through a temporary file), an
// import's downloaded media is kept in the bucket, and clips are cut from both. Real speech made
// with espeak-ng, an OpenAI-compatible transcription server, a local HTTP server as the web.
// S3_ENDPOINT unset: nothing to run here; say so and pass.
import t from 'tap'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { DIALOGUE, createImport, dialogue, json, startAsrServer, waitForNote } from './support/pipeline.ts'
import { S3_NOT_SET, listeningService, s3Bucket, s3TestServer } from './support/blobStores.ts'

const server = s3TestServer()
if (!server) {
  console.error(S3_NOT_SET)
  t.skip('S3_ENDPOINT not set: the S3 pipeline suite needs it (npm test starts MinIO and sets it)', () => {})
} else {
  const tmp = tempDir('pipeline-s3-')
  t.teardown(tmp.remove)
  const mp3Bytes = await readFile(await dialogue(tmp.dir))
  const asr = await startAsrServer(tmp.dir)
  t.teardown(asr.close)
  const web = await startHttpServer({ '/talk.mp3': { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } } })
  t.teardown(web.close)
  const bucket = await s3Bucket(server)
  t.teardown(bucket.destroy)
  const s = await listeningService({
    workers: true,
    env: { ...bucket.env, IMPORT_ALLOW_HOSTS: '127.0.0.1', ASR_BASE_URL: asr.baseUrl, JOB_POLL_MS: '20', JOB_PROGRESS_INTERVAL_MS: '20', JOB_BACKOFF_BASE_MS: '50' },
  })
  t.teardown(s.close)
  const fullText = DIALOGUE.map((d) => d.text).join(' ')
  const clip = (headers: Record<string, string>, noteId: string) => s.inject({ method: 'GET', url: `/v1/notes/${noteId}/clip?startMs=0&endMs=2000`, headers })

  t.test('an upload PUT straight to the bucket is finalized, transcribed and clipped', async (t) => {
    const a = await s.account('pro')
    const created = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify({ filename: 'dialogue.mp3', contentType: 'audio/mpeg', fileSizeBytes: mp3Bytes.length }) })
    const { noteId, upload } = created.json()
    t.match(upload.url, new RegExp(`^${server.endpoint}/${bucket.bucket}/uploads/${noteId}\\?`))
    const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: new Uint8Array(mp3Bytes) })
    t.equal(put.status, 200)
    t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })).statusCode, 202)
    const { note } = await waitForNote(s, a.headers, noteId)
    t.match(note, { status: 'ready', errorCode: null, transcript: { fullText } })
    const events = (await s.services.events.readStream(`note-${noteId}`)).events
    t.match(events.find((e) => e.type === 'NoteUploadReceived')?.data, { blobKey: `uploads/${noteId}`, sizeBytes: mp3Bytes.length, sha256: createHash('sha256').update(mp3Bytes).digest('hex') })
    const r = await clip(a.headers, noteId)
    t.equal(r.statusCode, 200)
    t.equal(r.headers['content-type'], 'audio/mpeg')
    t.ok(r.rawPayload.length > 1000)
  })

  t.test('an import keeps its downloaded media in the bucket, with its hash, and clips are cut from it', async (t) => {
    const a = await s.account('pro')
    const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
    const { note } = await waitForNote(s, a.headers, noteId)
    t.match(note, { status: 'ready', transcript: { fullText } })
    t.same(await bucket.store.stat(`media/${noteId}`), { sizeBytes: mp3Bytes.length, contentType: 'audio/mpeg', sha256: createHash('sha256').update(mp3Bytes).digest('hex') })
    t.ok((await bucket.store.list('media/')).includes(`media/${noteId}`))
    t.equal((await clip(a.headers, noteId)).statusCode, 200)
  })
}
