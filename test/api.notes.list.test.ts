// GET /v1/notes (filters, pagination), PATCH /v1/notes/{id} and folders, on the embedded read
// models and on MongoDB (FerretDB): the read side must answer the same on both.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { testService, type TestService } from './support/service.ts'
import { noteStream } from '../domain/notes/note.ts'
import { listNotes } from '../readmodels/notes.ts'
import { ListNotesQuery } from '../contract/notes.ts'

const json = { 'content-type': 'application/json' }

async function scenario(t: Test, mongo: boolean) {
  let now = Date.parse('2026-11-01T08:00:00.000Z')
  const s: TestService = await testService({ mongo, clock: () => new Date(now) })
  t.teardown(s.close)
  const a = await s.account('pro')
  const other = await s.account('pro')
  const get = async (query: string, who = a) => {
    const r = await s.inject({ method: 'GET', url: `/v1/notes${query}`, headers: who.headers })
    return r
  }
  const create = async (body: Record<string, unknown>, who = a) => {
    now += 60_000
    const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...who.headers, ...json }, payload: JSON.stringify(body) })
    if (r.statusCode !== 202) throw new Error(`create failed: ${r.body}`)
    return r.json().noteId as string
  }
  const patch = (id: string, body: unknown, who = a) => s.inject({ method: 'PATCH', url: `/v1/notes/${id}`, headers: { ...who.headers, ...json }, payload: JSON.stringify(body) })

  // Given: notes of every origin, some in a folder, with tags and a transcript.
  const standup = await create({ filename: 'standup.wav', contentType: 'audio/wav', title: 'Daily standup' })
  const podcast = await create({ audioUrl: 'https://feeds.example.org/show.rss', title: 'Café con leche, episodio 12' })
  const video = await create({ filename: 'demo.mp4', contentType: 'video/mp4', title: 'Product demo' })
  const talk = await create({ audioUrl: 'https://media.example.org/keynote.mp4', title: 'Keynote' })
  const youtube = await create({ audioUrl: 'https://www.youtube.com/watch?v=x1', title: 'Interview' })
  const sinceMark = new Date(now + 1).toISOString()
  const plain = await create({ filename: 'memo.wav', contentType: 'audio/wav', title: 'Voice memo' })
  await create({ filename: 'theirs.wav', contentType: 'audio/wav', title: 'Daily standup of someone else' }, other)

  const folder = await s.inject({ method: 'POST', url: '/v1/folders', headers: { ...a.headers, ...json }, payload: JSON.stringify({ name: 'Work' }) })
  t.equal(folder.statusCode, 201)
  const folderId = folder.json().id as string
  t.match((await patch(standup, { folderId, tags: ['team', 'daily'], description: 'Blockers and the release train' })).json(), { folderId, tags: ['team', 'daily'] })
  t.equal((await patch(video, { folderId, tags: ['team'] })).statusCode, 200)
  t.equal((await patch(podcast, { tags: ['daily'] })).statusCode, 200)

  // The transcript of the video mentions a word no title has.
  const events = s.services.events
  const rev = (await events.readStream(noteStream.of(video))).currentRevision
  const last = await events.appendToStream(noteStream.of(video), [
    {
      id: randomUUID(),
      type: 'NoteTranscribed',
      data: {
        transcript: {
          language: 'en',
          languagesDetected: ['en'],
          durationSeconds: 12,
          engine: 'test',
          provider: null,
          model: null,
          segments: [{ id: randomUUID(), sequence: 0, startMs: 0, endMs: 4000, speakerLabel: 'A', text: 'The quarterly forecast looks strong.', confidence: 0.9, locale: 'en', words: null }],
        },
        at: new Date(now).toISOString(),
      },
    },
  ], { expectedRevision: rev })
  await s.services.sync.waitFor('notes', last.lastGlobalPosition)

  t.test('newest first, with every field of a Note', async (t) => {
    const r = await get('')
    t.equal(r.statusCode, 200)
    const body = r.json()
    t.same(body.notes.map((n: { id: string }) => n.id), [plain, youtube, talk, video, podcast, standup])
    t.equal(body.hasMore, false)
    t.equal(body.nextCursor, null)
    t.same(Object.keys(body.notes[0]).sort(), ['audioDeletedAt', 'createdAt', 'description', 'durationSeconds', 'errorCode', 'errorMessage', 'folderId', 'id', 'keepAudio', 'language', 'origin', 'progress', 'recordedAt', 'sourceType', 'sourceUrl', 'status', 'tags', 'title', 'updatedAt'])
  })

  t.test('the REST list (served from stored JSON views) equals the list query MCP uses', async (t) => {
    for (const q of ['', '?limit=2', `?folderId=${folderId}`, '?q=cafe', '?tags=daily']) {
      const rest = (await get(q)).json()
      const query = ListNotesQuery.parse(Object.fromEntries(new URLSearchParams(q.slice(1))))
      t.same(rest, JSON.parse(JSON.stringify(await listNotes(s.docs, a.accountId, query))), q || 'no filter')
    }
  })

  t.test('filters', async (t) => {
    const ids = async (q: string) => (await get(q)).json().notes.map((n: { id: string }) => n.id)
    t.same(await ids(`?folderId=${folderId}`), [video, standup], 'folderId')
    t.same(await ids('?folderId=null'), [plain, youtube, talk, podcast], 'folderId=null')
    t.same(await ids('?tags=daily'), [podcast, standup], 'one tag')
    t.same(await ids('?tags=daily,team'), [standup], 'tags means all of them')
    t.same(await ids('?origin=videosite'), [youtube])
    t.same(await ids('?origin=video,podcast'), [talk, video, podcast], 'origin subset')
    t.same(await ids('?status=processing'), [plain, youtube, talk, video, podcast, standup])
    t.same(await ids('?status=ready'), [])
    t.same(await ids(`?since=${encodeURIComponent(sinceMark)}`), [plain])
    t.same(await ids('?since=2026-11-01T09:04:00%2B01:00'), [plain, youtube, talk], 'since with an offset, inclusive')
    t.same(await ids('?q=standup'), [standup], 'q over title')
    t.same(await ids('?q=RELEASE%20train'), [standup], 'q over description, all words, any case')
    t.same(await ids('?q=cafe'), [podcast], 'q folds accents')
    t.same(await ids('?q=quarterly%20forecast'), [video], 'q over transcript text')
    t.same(await ids('?q=standup%20forecast'), [], 'every word must match')
    t.same(await ids(`?folderId=${folderId}&tags=team&q=demo`), [video], 'filters combine')
  })

  t.test('invalid queries are 400 invalid_query', async (t) => {
    for (const q of ['?limit=0', '?limit=101', '?limit=abc', '?limit=1.5', '?origin=radio', '?origin=video,radio', '?status=done', '?since=yesterday', '?folderId=abc', `?q=${'x'.repeat(201)}`, '?cursor=not-a-uuid', `?cursor=${randomUUID()}`, '?limit=5&limit=6']) {
      const r = await get(q)
      t.equal(r.statusCode, 400, q.slice(0, 40))
      t.equal(r.json().error, 'invalid_query')
    }
  })

  t.test('a number out of range says the range (zod 4 lets a type message replace it)', async (t) => {
    for (const q of ['?limit=0', '?limit=101', '?limit=abc', '?limit=-1']) {
      t.match((await get(q)).json(), { message: 'Invalid request: query.limit: must be a whole number from 1 to 100', issues: [{ path: 'query.limit', message: 'must be a whole number from 1 to 100' }] }, q)
    }
    const clip = await s.inject({ method: 'GET', url: `/v1/notes/${randomUUID()}/clip?startMs=0&endMs=999999999`, headers: a.headers })
    t.match(clip.json(), { message: /endMs: must be a whole number from 0 to 86400000/ }, 'every bounded whole number')
  })

  t.test('pagination is stable while notes are added', async (t) => {
    const first = (await get('?limit=2')).json()
    t.equal(first.notes.length, 2)
    t.equal(first.hasMore, true)
    t.equal(first.nextCursor, youtube)
    const added = await create({ filename: 'late.wav', contentType: 'audio/wav' })
    const second = (await get(`?limit=2&cursor=${first.nextCursor}`)).json()
    t.same(second.notes.map((n: { id: string }) => n.id), [talk, video])
    const third = (await get(`?limit=2&cursor=${second.nextCursor}`)).json()
    t.same(third.notes.map((n: { id: string }) => n.id), [podcast, standup])
    t.equal(third.hasMore, false)
    t.equal(third.nextCursor, null)
    t.equal((await get('?limit=1')).json().notes[0].id, added, 'the new note shows on a fresh first page')
    t.equal((await get(`?cursor=${first.nextCursor}`, other)).statusCode, 400, "another account's note is not a cursor")
  })

  t.test('a note never shows in another account', async (t) => {
    const theirs = (await get('', other)).json().notes
    t.equal(theirs.length, 1)
    t.equal(theirs[0].title, 'Daily standup of someone else')
  })

  t.test('patch and folders', async (t) => {
    t.equal((await patch(plain, {})).statusCode, 400, 'nothing to change')
    t.equal((await patch(plain, { folderId: randomUUID() })).statusCode, 404, 'unknown folder')
    const theirFolder = (await s.inject({ method: 'POST', url: '/v1/folders', headers: { ...other.headers, ...json }, payload: '{"name":"Theirs"}' })).json().id
    t.equal((await patch(plain, { folderId: theirFolder })).statusCode, 404, "someone else's folder")
    t.equal((await patch(plain, { tags: ['x'.repeat(51)] })).statusCode, 400)
    const renamed = await s.inject({ method: 'PATCH', url: `/v1/folders/${folderId}`, headers: { ...a.headers, ...json }, payload: '{"name":"Work 2026"}' })
    t.match(renamed.json(), { id: folderId, name: 'Work 2026', noteCount: 2 })
    const list = await s.inject({ method: 'GET', url: '/v1/folders', headers: a.headers })
    t.same(list.json().folders.map((f: { name: string }) => f.name), ['Work 2026'])
    const del = await s.inject({ method: 'DELETE', url: `/v1/folders/${folderId}`, headers: a.headers })
    t.equal(del.statusCode, 200)
    t.same((await get(`?folderId=${folderId}`)).json().notes, [], 'no note points at a deleted folder')
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${standup}`, headers: a.headers })).json().folderId, null)
    t.equal((await s.inject({ method: 'DELETE', url: `/v1/folders/${theirFolder}`, headers: a.headers })).statusCode, 404)
  })
}

t.test('on the embedded read models', (t) => scenario(t, false))
t.test('on MongoDB (FerretDB)', async (t) => {
  if (!process.env.MONGO_URL) throw new Error('MONGO_URL is not set: npm test starts FerretDB and sets it')
  await scenario(t, true)
})
