// POST /v1/notes (both shapes), the presigned upload, and finalize (spec parts 3, 4, 8).
import t from 'tap'
import { testService } from './support/service.ts'
import { wavBytes } from './support/media.ts'
import { creditAccount } from '../readmodels/ledger.ts'
import { usageDecider, usageStream } from '../domain/usage/usage.ts'

const json = { 'content-type': 'application/json' }

t.test('imports', async (t) => {
  const s = await testService({ env: { IMPORT_ALLOW_HOSTS: 'intranet.example.org' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json, ...headers }, payload: JSON.stringify(body) })

  t.test('given a podcast feed link, then 202 with provider, next, and a note to poll', async (t) => {
    const r = await post({ audioUrl: 'https://podcasts.example.org/show/feed.rss', title: 'Episode 1' })
    t.equal(r.statusCode, 202)
    const body = r.json()
    t.match(body, { status: 'processing', provider: 'podcast-rss', next: /GET \/v1\/notes\// })
    t.notOk('upload' in body)
    const note = await s.inject({ method: 'GET', url: `/v1/notes/${body.noteId}`, headers: a.headers })
    t.equal(note.statusCode, 200)
    t.match(note.json(), { id: body.noteId, title: 'Episode 1', status: 'processing', sourceType: 'url', origin: 'podcast', sourceUrl: 'https://podcasts.example.org/show/feed.rss', transcript: null, aiNotes: [], outline: [] })
  })

  t.test('providers and origins follow the link', async (t) => {
    const cases: [string, string, string][] = [
      ['https://www.youtube.com/watch?v=abc', 'videosite', 'videosite'],
      ['https://podcasts.apple.com/us/podcast/x/id123456', 'podcast-directory', 'podcast'],
      ['https://media.example.org/talk.mp3', 'direct', 'audio'],
      ['https://media.example.org/talk.mp4', 'direct', 'video'],
      ['https://media.example.org/download?id=7', 'direct', 'link'],
    ]
    for (const [audioUrl, provider, origin] of cases) {
      const r = await post({ audioUrl })
      t.equal(r.statusCode, 202, audioUrl)
      t.equal(r.json().provider, provider)
      const note = await s.inject({ method: 'GET', url: `/v1/notes/${r.json().noteId}`, headers: a.headers })
      t.equal(note.json().origin, origin)
    }
  })

  t.test('links that cannot be ingested are 400 invalid_audio_url', async (t) => {
    const bad = [
      'ftp://media.example.org/a.mp3',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'not a url',
      'https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC',
      'https://music.apple.com/us/album/x/1',
      'http://127.0.0.1:8080/a.mp3',
      'http://[::1]/a.mp3',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.5/a.mp3',
      'http://192.168.1.1/a.mp3',
      'https://rebind.example.org/a.mp3',
      'https://unknown-host.invalid/a.mp3',
      'https://user:pass@media.example.org/a.mp3',
      `https://media.example.org/${'a'.repeat(2000)}.mp3`,
    ]
    for (const audioUrl of bad) {
      const r = await post({ audioUrl })
      t.equal(r.statusCode, 400, audioUrl.slice(0, 60))
      t.equal(r.json().error, 'invalid_audio_url')
    }
  })

  t.test('the allowlist admits a non-public host for self-hosting', async (t) => {
    const r = await post({ audioUrl: 'http://intranet.example.org/a.mp3' })
    t.equal(r.statusCode, 202)
  })

  t.test('malformed bodies are 400 invalid_audio_url', async (t) => {
    const bodies: unknown[] = [
      {},
      { audioUrl: 42 },
      { audioUrl: 'https://media.example.org/a.mp3', filename: 'a.mp3', contentType: 'audio/mpeg' },
      { filename: 'a.mp3' },
      { contentType: 'audio/mpeg' },
      { filename: 'a.mp3', contentType: `audio/${'x'.repeat(100)}` },
      { audioUrl: 'https://media.example.org/a.mp3', title: 'x'.repeat(201) },
      { audioUrl: 'https://media.example.org/a.mp3', language: 'x'.repeat(21) },
      { audioUrl: 'https://media.example.org/a.mp3', keepAudio: true },
      [],
      'a string',
      null,
    ]
    for (const b of bodies) {
      const r = await post(b)
      t.equal(r.statusCode, 400, JSON.stringify(b).slice(0, 60))
      t.equal(r.json().error, 'invalid_audio_url')
    }
  })

  t.test('an upload field out of range is 400 invalid_request naming the field, not invalid_audio_url (issue 16 item 9)', async (t) => {
    const cases: [unknown, string][] = [
      [{ filename: 'a.mp3', contentType: 'audio/mpeg', fileSizeBytes: 0 }, 'body.fileSizeBytes'],
      [{ filename: 'a.mp3', contentType: 'audio/mpeg', fileSizeBytes: -1 }, 'body.fileSizeBytes'],
      [{ filename: 'a.mp3', contentType: 'audio/mpeg', fileSizeBytes: 1.5 }, 'body.fileSizeBytes'],
      [{ filename: 'a.mp3', contentType: 'audio/mpeg', fileSizeBytes: '12' }, 'body.fileSizeBytes'],
      [{ filename: 'x'.repeat(256), contentType: 'audio/mpeg' }, 'body.filename'],
      [{ filename: 'a.mp3', contentType: 'audio/mpeg', keepAudio: 'yes' }, 'body.keepAudio'],
    ]
    for (const [b, field] of cases) {
      const r = await post(b)
      t.equal(r.statusCode, 400, JSON.stringify(b).slice(0, 60))
      t.match(r.json(), { error: 'invalid_request', message: new RegExp(field.replace('.', '\\.')), issues: [{ path: field }] })
    }
    const mixed = await post({ audioUrl: 42, fileSizeBytes: 0 })
    t.equal(mixed.json().error, 'invalid_audio_url', 'a problem with the link (or the shape) keeps the link code')
  })

  t.test('given too few credits, then 402 insufficient_credits with balance and required, and nothing is created', async (t) => {
    const poor = await s.account('pro')
    await s.services.credits.charge(poor.accountId, { operation: 'test', cost: 4980 })
    const before = (await s.inject({ method: 'GET', url: '/v1/notes', headers: poor.headers })).json().notes.length
    const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...poor.headers, ...json }, payload: JSON.stringify({ audioUrl: 'https://media.example.org/a.mp3' }) })
    t.equal(r.statusCode, 402)
    t.match(r.json(), { error: 'insufficient_credits', balance: 20, required: 50 })
    t.equal((await s.inject({ method: 'GET', url: '/v1/notes', headers: poor.headers })).json().notes.length, before)
  })

  t.test('an accepted link holds 50 credits in the ledger', async (t) => {
    const b = await s.account('pro')
    const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...b.headers, ...json }, payload: JSON.stringify({ audioUrl: 'https://media.example.org/b.mp3' }) })
    t.equal(r.statusCode, 202)
    const { state } = await s.services.credits.state(b.accountId)
    t.equal(state.balance, 4950)
    t.equal(Object.values(state.reservations)[0]?.noteId, r.json().noteId)
  })

  t.test('the same Idempotency-Key returns the first note and holds credits once', async (t) => {
    const c = await s.account('pro')
    const send = () =>
      s.inject({ method: 'POST', url: '/v1/notes', headers: { ...c.headers, ...json, 'idempotency-key': 'retry-1' }, payload: JSON.stringify({ audioUrl: 'https://media.example.org/c.mp3' }) })
    const first = await send()
    const second = await send()
    t.equal(first.statusCode, 202)
    t.equal(second.statusCode, 202)
    t.equal(second.json().noteId, first.json().noteId)
    t.equal((await s.services.credits.state(c.accountId)).state.balance, 4950)
    const other = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json, 'idempotency-key': 'retry-1' }, payload: JSON.stringify({ audioUrl: 'https://media.example.org/c.mp3' }) })
    t.not(other.json().noteId, first.json().noteId, 'keys are per account')
  })
})

t.test('uploads', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const create = async (body: Record<string, unknown>, who = a) => {
    const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...who.headers, ...json }, payload: JSON.stringify(body) })
    return r
  }
  const put = (url: string, payload: Buffer, contentType: string) => {
    const u = new URL(url)
    return s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': contentType }, payload })
  }
  const finalize = (noteId: string, body: unknown = {}, who = a) =>
    s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...who.headers, ...json }, payload: JSON.stringify(body) })

  t.test('given an upload slot, when the bytes are PUT and finalized, then 202 with a jobId and the note is queued', async (t) => {
    const wav = wavBytes(90)
    const r = await create({ filename: 'meeting.wav', contentType: 'audio/wav', fileSizeBytes: wav.length })
    t.equal(r.statusCode, 202)
    const { noteId, upload } = r.json()
    t.match(upload, { method: 'PUT', expiresInSeconds: 3600, headers: { 'Content-Type': 'audio/wav' } })
    t.match(upload.url, /^http:\/\/127\.0\.0\.1:3000\/uploads\//)
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json().title, 'meeting')

    const early = await finalize(noteId)
    t.equal(early.statusCode, 409, 'finalize before the bytes arrive is refused')
    t.match(early.json(), { error: 'invalid_state', current: 'awaiting_upload', message: /PUT the file/ })

    const stored = await put(upload.url, wav, 'audio/wav')
    t.equal(stored.statusCode, 200)
    t.equal(stored.json().sizeBytes, wav.length)

    const done = await finalize(noteId, { title: 'Weekly meeting' })
    t.equal(done.statusCode, 202)
    t.match(done.json(), { noteId, status: 'processing', jobId: /\S/ })
    const note = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json()
    t.match(note, { title: 'Weekly meeting', status: 'processing', durationSeconds: 90, progress: { stage: 'queued' } })

    const again = await finalize(noteId)
    t.equal(again.statusCode, 409)
    t.match(again.json(), { error: 'invalid_state', current: 'processing' })
    t.equal((await put(upload.url, wav, 'audio/wav')).statusCode, 409, 'no PUT after finalize')
  })

  t.test('presigned URLs are bound to their note, type, size and time', async (t) => {
    const wav = wavBytes(2)
    const { noteId, upload } = (await create({ filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: wav.length })).json()
    const u = new URL(upload.url)
    const wrongSig = await put(upload.url.replace(/sig=[^&]+/, 'sig=AAAA'), wav, 'audio/wav')
    t.equal(wrongSig.statusCode, 403)
    t.equal(wrongSig.json().error, 'invalid_upload_signature')
    const other = (await create({ filename: 'b.wav', contentType: 'audio/wav', fileSizeBytes: wav.length })).json()
    const swapped = await put(`http://x${new URL(other.upload.url).pathname}${u.search}`, wav, 'audio/wav')
    t.equal(swapped.statusCode, 403, 'a signature for one note does not open another')
    const longer = await put(upload.url.replace(/exp=\d+/, (m: string) => `exp=${Number(m.slice(4)) + 3600}`), wav, 'audio/wav')
    t.equal(longer.statusCode, 403, 'the expiry cannot be extended')
    const wrongType = await put(upload.url, wav, 'audio/mpeg')
    t.equal(wrongType.statusCode, 400)
    t.match(wrongType.json().message, /audio\/wav/)
    const wrongSize = await put(upload.url, Buffer.concat([wav, Buffer.alloc(10)]), 'audio/wav')
    t.equal(wrongSize.statusCode, 413)
    t.equal((await put(upload.url, wav, 'audio/wav')).statusCode, 200)
    t.ok(noteId)
  })

  t.test('an expired upload URL is refused with a clear error', async (t) => {
    let now = Date.parse('2026-11-22T10:00:00Z')
    const s2 = await testService({ clock: () => new Date(now), env: { UPLOAD_URL_TTL_SECONDS: '60' } })
    t.teardown(s2.close)
    const b = await s2.account('pro')
    const r = await s2.inject({ method: 'POST', url: '/v1/notes', headers: { ...b.headers, ...json }, payload: JSON.stringify({ filename: 'a.wav', contentType: 'audio/wav' }) })
    t.equal(r.json().upload.expiresInSeconds, 60)
    now += 61_000
    const u = new URL(r.json().upload.url)
    const late = await s2.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'audio/wav' }, payload: wavBytes(1) })
    t.equal(late.statusCode, 403)
    t.match(late.json(), { error: 'upload_url_expired', message: /expired/ })
  })

  t.test('bytes that are not media are refused at finalize with 415, and the note still waits', async (t) => {
    const junk = Buffer.from('this is not audio at all, just text pretending'.repeat(20))
    const { noteId, upload } = (await create({ filename: 'fake.mp3', contentType: 'audio/mpeg' })).json()
    t.equal((await put(upload.url, junk, 'audio/mpeg')).statusCode, 200)
    const r = await finalize(noteId)
    t.equal(r.statusCode, 415)
    t.equal(r.json().error, 'unsupported_media_type')
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json().progress.stage, 'awaiting_upload')
  })

  t.test('content types and sizes', async (t) => {
    for (const contentType of ['text/plain', 'application/pdf', 'image/png', 'audio', 'audio/', 'video']) {
      const r = await create({ filename: 'a.bin', contentType })
      t.equal(r.statusCode, 415, contentType)
      t.equal(r.json().error, 'unsupported_media_type')
    }
    t.equal((await create({ filename: 'a.mp4', contentType: 'video/mp4' })).statusCode, 202)
    const tooBig = await create({ filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: 2 * 1024 ** 3 + 1 })
    t.equal(tooBig.statusCode, 413)
    t.equal(tooBig.json().error, 'file_too_large')
    const power = await s.account('power')
    t.equal((await create({ filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: 2 * 1024 ** 3 + 1 }, power)).statusCode, 202, 'power allows larger files')
  })

  t.test('given browser media types with parameters, then the upload opens and the PUT may repeat the declared type', async (t) => {
    const wav = wavBytes(1)
    for (const [declared, canonical] of <[string, string][]>[
      ['audio/webm;codecs=opus', 'audio/webm;codecs=opus'],
      ['audio/ogg; codecs=opus', 'audio/ogg;codecs=opus'],
      ['audio/mpeg; charset=binary', 'audio/mpeg;charset=binary'],
      ['Video/MP4; codecs="avc1.42E01E, mp4a.40.2"', 'video/mp4;codecs="avc1.42E01E, mp4a.40.2"'],
    ]) {
      const r = await create({ filename: 'rec.webm', contentType: declared })
      t.equal(r.statusCode, 202, declared)
      const { upload } = r.json()
      t.equal(upload.headers['Content-Type'], canonical, 'the PUT header is the declared type, canonically spelt')
      t.equal((await put(upload.url, wav, declared)).statusCode, 200, `PUT with ${declared}`)
      t.equal((await put(upload.url, wav, canonical.split(';')[0]!)).statusCode, 200, 'PUT with the bare essence')
      const wrong = await put(upload.url, wav, 'application/octet-stream')
      t.equal(wrong.statusCode, 400, 'another essence is refused')
      t.equal(wrong.json().error, 'invalid_request')
    }
    for (const contentType of ['audio/webm;codecs', 'audio/webm;=opus', 'audio/webm; codecs="opus', 'audio/we bm']) {
      t.equal((await create({ filename: 'a.bin', contentType })).statusCode, 415, `malformed: ${contentType}`)
    }
  })

  t.test('given the monthly minutes are used up, then finalize is 402 quota_exceeded with remaining and needed', async (t) => {
    const b = await s.account('pro')
    await s.services.handler.handle(
      usageStream.of(b.accountId),
      { type: 'ReserveMinutes', noteId: 'earlier', minutes: 2999, quota: 3000, now: new Date().toISOString() },
      usageDecider,
    )
    const wav = wavBytes(121)
    const { noteId, upload } = (await create({ filename: 'long.wav', contentType: 'audio/wav' }, b)).json()
    await put(upload.url, wav, 'audio/wav')
    const r = await finalize(noteId, {}, b)
    t.equal(r.statusCode, 402)
    t.match(r.json(), { error: 'quota_exceeded', remaining: 1, needed: 3 })
    const short = (await create({ filename: 'short.wav', contentType: 'audio/wav' }, b)).json()
    await put(short.upload.url, wavBytes(30), 'audio/wav')
    t.equal((await finalize(short.noteId, {}, b)).statusCode, 202, 'a one-minute upload still fits')
  })

  t.test('given the storage quota is nearly used, then a larger upload is 413 at create and at finalize', async (t) => {
    const b = await s.account('pro')
    const quota = 50 * 1024 ** 3
    const wav = wavBytes(5)
    await s.services.handler.handle(usageStream.of(b.accountId), { type: 'AllocateStorage', noteId: 'earlier', bytes: quota - wav.length + 1, quota, now: new Date().toISOString() }, usageDecider)
    const declared = await create({ filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: wav.length }, b)
    t.equal(declared.statusCode, 413)
    t.match(declared.json(), { error: 'file_too_large', storageBytes: quota })
    const undeclared = (await create({ filename: 'a.wav', contentType: 'audio/wav' }, b)).json()
    await put(undeclared.upload.url, wav, 'audio/wav')
    const r = await finalize(undeclared.noteId, {}, b)
    t.equal(r.statusCode, 413, 'the real size is checked once the bytes are there')
    const { state } = await s.services.handler.load(usageStream.of(b.accountId), usageDecider)
    t.same(state.minutesByNote, {}, 'no minutes were taken for the refused finalize')
  })

  t.test("someone else's note is 404 not_found, exactly like a missing one", async (t) => {
    const { noteId } = (await create({ filename: 'a.wav', contentType: 'audio/wav' })).json()
    const intruder = await s.account('pro')
    const theirs = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: intruder.headers })
    const missing = await s.inject({ method: 'GET', url: `/v1/notes/00000000-0000-4000-8000-000000000000`, headers: intruder.headers })
    t.equal(theirs.statusCode, 404)
    t.same(theirs.json(), missing.json())
    t.equal((await finalize(noteId, {}, intruder)).statusCode, 404)
    t.equal((await s.inject({ method: 'PATCH', url: `/v1/notes/${noteId}`, headers: { ...intruder.headers, ...json }, payload: '{"title":"mine"}' })).statusCode, 404)
  })

  t.test('uploads cost no credits', async (t) => {
    const c = await s.account('pro')
    await create({ filename: 'a.wav', contentType: 'audio/wav' }, c)
    await s.services.sync.waitFor('credit-ledger', (await s.services.events.readAll({ maxCount: 1e6 })).at(-1)!.globalPosition).catch(() => {})
    t.equal((await creditAccount(s.docs, c.accountId))?.balance, 5000)
  })
})
