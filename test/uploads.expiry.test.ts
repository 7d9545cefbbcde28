// Abandoned and refused uploads (issue 16, item 6): a note whose upload is never PUT and
// finalized, or whose finalize was refused and never retried, fails once the upload URL has
// expired (`upload_expired`, or the refusal's code), with a `note.failed` webhook, and its bytes
// are deleted. The sweeper's clock is injected: no test waits an hour.
import t from 'tap'
import { testService } from './support/service.ts'
import { startHttpServer } from './support/httpServer.ts'
import { json, startAsrServer } from './support/pipeline.ts'
import { wavBytes } from './support/media.ts'
import { tempDir } from './support/tmp.ts'
import { startUploadExpiry } from '../workers/uploadExpiry.ts'

const hooks: { type: string; data: { noteId: string; status: string; errorCode: string | null } }[] = []
const web = await startHttpServer({
  '/hook': (_req, body) => {
    hooks.push(JSON.parse(body.toString('utf8')))
    return { status: 200, body: 'ok' }
  },
})
t.teardown(web.close)

// The finalized note is transcribed by a stand-in engine: the default local one would first fetch
// its runtime from PyPI into the service's temporary directory, for nothing this suite asserts.
const tmp = tempDir('uploads-expiry-')
t.teardown(tmp.remove)
const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)
const s = await testService({ workers: true, env: { WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '20', UPLOAD_URL_TTL_SECONDS: '600', ASR_BASE_URL: asr.baseUrl } })
t.teardown(s.close)

const until = async (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

t.test('given uploads never finalized or refused, when their URL has expired, then they fail with upload_expired or the refusal code, a note.failed webhook, and no bytes left', async (t) => {
  const a = await s.account('power')
  const hook = await s.inject({ method: 'POST', url: '/v1/webhooks', headers: { ...a.headers, ...json }, payload: JSON.stringify({ url: web.url('/hook'), events: ['note.failed'] }) })
  t.equal(hook.statusCode, 201)
  const create = async (body: Record<string, unknown>) => (await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify(body) })).json()
  const put = (url: string, payload: Buffer, contentType: string) => {
    const u = new URL(url)
    return s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': contentType }, payload })
  }
  const finalize = (noteId: string) => s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })
  const note = async (noteId: string) => (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json()

  // Never PUT.
  const abandoned = await create({ filename: 'never.wav', contentType: 'audio/wav' })
  // PUT but never finalized.
  const unfinalized = await create({ filename: 'later.wav', contentType: 'audio/wav' })
  t.equal((await put(unfinalized.upload.url, wavBytes(2), 'audio/wav')).statusCode, 200)
  // PUT bytes that are no media: finalize refused 415, never retried.
  const refused = await create({ filename: 'fake.wav', contentType: 'audio/wav' })
  t.equal((await put(refused.upload.url, Buffer.from('this is not audio at all, just text '.repeat(20)), 'audio/wav')).statusCode, 200)
  const r = await finalize(refused.noteId)
  t.equal(r.statusCode, 415)
  t.equal(r.json().error, 'unsupported_media_type')
  // Finalized in time: never expires.
  const good = await create({ filename: 'good.wav', contentType: 'audio/wav' })
  t.equal((await put(good.upload.url, wavBytes(2), 'audio/wav')).statusCode, 200)
  t.equal((await finalize(good.noteId)).statusCode, 202)

  let now = new Date()
  const sweeper = startUploadExpiry({ handler: s.services.handler, docs: s.docs, blobs: s.services.blobs, uploadUrlTtlSeconds: 600, graceMs: 60_000, checkEveryMs: 3_600_000, clock: () => now })
  t.teardown(() => sweeper.stop())

  t.equal(await sweeper.runOnce(), 0, 'nothing expires while the URL lives')
  now = new Date(Date.now() + 600_000 + 30_000)
  t.equal(await sweeper.runOnce(), 0, 'nor during the grace for a PUT still streaming')
  t.equal((await note(abandoned.noteId)).status, 'processing')

  now = new Date(Date.now() + 600_000 + 61_000)
  t.equal(await sweeper.runOnce(), 3)
  t.equal(await sweeper.runOnce(), 0, 'a second pass changes nothing')
  await until('the read model', async () => (await note(refused.noteId)).status === 'failed')
  t.match(await note(abandoned.noteId), { status: 'failed', errorCode: 'upload_expired', progress: null })
  t.match(await note(unfinalized.noteId), { status: 'failed', errorCode: 'upload_expired' })
  t.match(await note(refused.noteId), { status: 'failed', errorCode: 'unsupported_media_type' })
  t.not((await note(good.noteId)).errorCode, 'upload_expired', 'a finalized upload is not touched')
  const failed = (await s.services.events.readStream(`note-${refused.noteId}`)).events.find((e) => e.type === 'NoteFailed')
  t.match(failed?.data, { errorCode: 'unsupported_media_type', message: /expired after the last finalize was refused/ })

  for (const id of [abandoned.noteId, unfinalized.noteId, refused.noteId]) {
    t.equal(await s.services.blobs.stat(`uploads/${id}`), null, `no bytes left for ${id}`)
  }
  t.equal((await put(unfinalized.upload.url, wavBytes(2), 'audio/wav')).statusCode, 409, 'the expired slot takes no more bytes')

  await until('three note.failed webhooks', () => new Set(hooks.map((h) => h.data.noteId)).size >= 3)
  const byNote = new Map(hooks.map((h) => [h.data.noteId, h]))
  t.match(byNote.get(abandoned.noteId), { type: 'note.failed', data: { status: 'failed', errorCode: 'upload_expired' } })
  t.match(byNote.get(refused.noteId), { type: 'note.failed', data: { errorCode: 'unsupported_media_type' } })
})
