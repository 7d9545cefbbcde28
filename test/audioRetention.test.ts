// The audio retention window: audio older than AUDIO_RETENTION_DAYS is deleted unless the note
// keeps it; the storage it took is freed; the transcript and the note stay; clips then say why
// there is no audio.
import t from 'tap'
import { testService } from './support/service.ts'
import { wavBytes } from './support/media.ts'
import { startAudioRetention } from '../workers/audioRetention.ts'
import { usageDecider, usageStream } from '../domain/usage/usage.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'

const json = { 'content-type': 'application/json' }
const DAY = 24 * 3600 * 1000

t.test('given uploads older than the window, when retention runs, then unkept audio is deleted and its storage freed', async (t) => {
  let now = Date.now()
  const clock = () => new Date(now)
  const s = await testService({ clock })
  t.teardown(s.close)
  const a = await s.account('pro')
  const wav = wavBytes(3)

  async function upload(keepAudio?: boolean) {
    const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify({ filename: 'a.wav', contentType: 'audio/wav', ...(keepAudio !== undefined ? { keepAudio } : {}) }) })
    const { noteId, upload: up } = r.json()
    const u = new URL(up.url)
    await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'audio/wav' }, payload: wav })
    t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })).statusCode, 202)
    return noteId as string
  }
  const note = async (id: string) => (await s.inject({ method: 'GET', url: `/v1/notes/${id}`, headers: a.headers })).json()
  /** The note's own copy of its upload (finalize binds one). */
  const audioKey = async (id: string) => {
    const { state } = await s.services.handler.load(noteStream.of(id), noteDecider)
    return state.exists && state.received ? state.received.blobKey : 'none'
  }
  const stored = async () => (await s.services.handler.load(usageStream.of(a.accountId), usageDecider)).state.storedBytes

  const expiring = await upload()
  const keptAtCreate = await upload(true)
  const keptLater = await upload()
  t.match(await s.inject({ method: 'PATCH', url: `/v1/notes/${keptLater}`, headers: { ...a.headers, ...json }, payload: '{"keepAudio":true}' }), { statusCode: 200 })
  now += 10 * DAY
  const recent = await upload()
  t.equal(await stored(), 4 * wav.length)
  t.match(await note(expiring), { keepAudio: false, audioDeletedAt: null })

  const retention = startAudioRetention({ handler: s.services.handler, docs: s.docs, blobs: s.services.blobs, retentionDays: 30, checkEveryMs: 3_600_000, clock })
  t.teardown(retention.stop)
  t.equal(await retention.runOnce(), 0, 'nothing is due within the window')

  now += 21 * DAY
  t.equal(await retention.runOnce(), 1, 'only the unkept audio past 30 days goes')
  await s.services.sync.waitFor('notes', (await s.services.events.readAll({ maxCount: 1_000_000 })).at(-1)!.globalPosition)
  t.match(await note(expiring), { audioDeletedAt: new Date(now).toISOString(), status: 'processing', title: 'a' })
  t.equal(await s.services.blobs.stat(await audioKey(expiring)), null, 'the bytes are gone')
  for (const id of [keptAtCreate, keptLater, recent]) t.ok(await s.services.blobs.stat(await audioKey(id)), 'kept or recent audio stays')
  t.equal(await stored(), 3 * wav.length, 'its storage is freed')
  t.equal(await retention.runOnce(), 0, 'a second pass changes nothing')
  t.equal(await stored(), 3 * wav.length)

  const keepAgain = await s.inject({ method: 'PATCH', url: `/v1/notes/${expiring}`, headers: { ...a.headers, ...json }, payload: '{"keepAudio":true}' })
  t.equal(keepAgain.statusCode, 409)
  t.equal(keepAgain.json().error, 'audio_unavailable')

  // Letting kept audio go makes it due at the next pass.
  await s.inject({ method: 'PATCH', url: `/v1/notes/${keptLater}`, headers: { ...a.headers, ...json }, payload: '{"keepAudio":false}' })
  t.equal(await retention.runOnce(), 1)
  t.equal(await s.services.blobs.stat(await audioKey(keptLater)), null)
})
