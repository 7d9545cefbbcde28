// POST /v1/notes/{id}/ask and POST /v1/ask with the local engine: citations that resolve to real
// segments whose start matches the quoted [mm:ss], library answers quoting [Note title | mm:ss],
// conversations, isolation between accounts, charges. (chat_failed: api.languageRemote.test.ts.)
import t, { type Test } from 'tap'
import { testService } from './support/service.ts'
import { appendNote, quotedTimes } from './support/notes.ts'
import { balance, moves } from './support/ledger.ts'
import { mmss } from '../domain/language/time.ts'
import type { TranscriptSegment } from '../domain/notes/transcript.ts'

const json = { 'content-type': 'application/json' }

/** Every cited segment is one of `segments`, and the quoted times are exactly the cited segments' starts. */
function checkCitations(t: Test, answer: { answer: string; citedSegments: string[] }, segments: TranscriptSegment[]) {
  const byId = new Map(segments.map((s) => [s.id, s]))
  t.ok(answer.citedSegments.length > 0, 'cites something')
  for (const id of answer.citedSegments) t.ok(byId.has(id), `cited ${id} is a segment of the note`)
  const quoted = new Set(quotedTimes(answer.answer).map((q) => q.time))
  const cited = new Set(answer.citedSegments.map((id) => mmss(byId.get(id)!.startMs)))
  t.same([...quoted].sort(), [...cited].sort(), 'each quoted [mm:ss] is the start of a cited segment, and each cited segment is quoted')
}

t.test('ask', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const roadmap = await appendNote(s, a.accountId, {
    title: 'Roadmap review',
    language: 'en',
    gapMs: 41_000,
    lines: [
      ['A', 'Welcome everyone to the roadmap review.'],
      ['A', 'The budget for the marketing campaign is forty thousand euros.'],
      ['B', 'The budget for the office renovation is twelve thousand euros.'],
      ['A', 'Marta owns the marketing campaign and reports every Monday.'],
      ['B', 'Luis owns the office renovation and reports on Fridays.'],
      ['A', 'We decided to launch the mobile app in April instead of March.'],
      ['B', 'The app launch depends on the payment provider finishing their review.'],
    ],
  })
  const hiring = await appendNote(s, a.accountId, {
    title: 'Hiring | plan [Q2]',
    language: 'en',
    lines: [
      ['A', 'We will hire two backend engineers this quarter.'],
      ['B', 'The interviews start in May with a take-home exercise.'],
      ['A', 'The launch of the careers page is planned for April.'],
    ],
  })
  const askNote = (body: unknown, id = roadmap.noteId, headers = a.headers) => s.inject({ method: 'POST', url: `/v1/notes/${id}/ask`, headers: { ...headers, ...json }, payload: JSON.stringify(body) })
  const askAll = (body: unknown, headers = a.headers) => s.inject({ method: 'POST', url: '/v1/ask', headers: { ...headers, ...json }, payload: JSON.stringify(body) })

  t.test('a question about one note: quotes [mm:ss] of real segments, cites them, costs 10', async (t) => {
    const before = await balance(s, a.accountId)
    const r = await askNote({ question: 'When will the mobile app launch?' })
    t.equal(r.statusCode, 200)
    const body = r.json()
    t.match(body, { noteId: roadmap.noteId, question: 'When will the mobile app launch?', sessionId: String })
    checkCitations(t, body, roadmap.segments)
    t.ok(body.citedSegments.includes(roadmap.segments[5]!.id), 'the decision about the launch is cited')
    t.match(body.answer, /\[03:25\] “We decided to launch the mobile app in April/)
    t.equal(await balance(s, a.accountId), before - 10)
    t.notOk(body.citedSegments.some((id: string) => hiring.segments.some((x) => x.id === id)), 'only this note')
  })

  t.test('a question across the library quotes [Note title | mm:ss] and lists the notes cited', async (t) => {
    const before = await balance(s, a.accountId)
    const r = await askAll({ question: 'Which launch is in April?' })
    t.equal(r.statusCode, 200)
    const body = r.json()
    const all = [...roadmap.segments, ...hiring.segments]
    const byId = new Map(all.map((x) => [x.id, x]))
    const titleOf = (id: string) => (roadmap.segments.some((x) => x.id === id) ? 'Roadmap review' : 'Hiring plan Q2')
    const quoted = quotedTimes(body.answer)
    t.ok(quoted.length >= 2, 'quotes both notes')
    t.same(
      quoted.map((q) => `${q.title} | ${q.time}`).sort(),
      body.citedSegments.map((id: string) => `${titleOf(id)} | ${mmss(byId.get(id)!.startMs)}`).sort(),
      'each quoted [title | mm:ss] is a cited segment of that note (the title without the characters that would break the label)',
    )
    t.same(body.citedNotes.map((n: { title: string }) => n.title).sort(), ['Hiring | plan [Q2]', 'Roadmap review'])
    t.match(body, { question: 'Which launch is in April?', sessionId: String })
    t.equal(await balance(s, a.accountId), before - 10)
  })

  t.test('a follow-up in the same session sees the earlier question', async (t) => {
    const first = (await askNote({ question: 'What is the budget of the office renovation?' })).json()
    t.ok(first.citedSegments.includes(roadmap.segments[2]!.id))
    const alone = (await askNote({ question: 'Who is in charge of it?' })).json()
    t.same(alone.citedSegments, [], 'on its own the follow-up finds nothing')
    t.match(alone.answer, /does not seem to talk about that/)
    const follow = await askNote({ question: 'Who is in charge of it?', sessionId: first.sessionId })
    t.equal(follow.statusCode, 200)
    t.equal(follow.json().sessionId, first.sessionId)
    checkCitations(t, follow.json(), roadmap.segments)
    t.ok(follow.json().citedSegments.some((id: string) => [roadmap.segments[2]!.id, roadmap.segments[4]!.id].includes(id)), 'the office renovation, from the earlier turn')
    const lib = (await askAll({ question: 'And who reports on Fridays?', sessionId: first.sessionId })).json()
    t.equal(lib.sessionId, first.sessionId, 'a session continues across note and library questions')
  })

  t.test('accounts are isolated: the library of one never shows in the answers of another', async (t) => {
    const b = await s.account('pro')
    const secret = await appendNote(s, b.accountId, { title: 'Secret roadmap', lines: [['A', 'The mobile app launch in April has a secret budget of nine million euros.']] })
    const r = (await askAll({ question: 'What is the secret budget of the mobile app launch in April?' })).json()
    t.notOk(r.citedSegments.includes(secret.segments[0]!.id))
    t.notOk(r.citedNotes.some((n: { noteId: string }) => n.noteId === secret.noteId))
    t.notMatch(r.answer, /nine million|Secret roadmap/)
    const rb = (await askAll({ question: 'What is the budget of the office renovation?' }, b.headers)).json()
    t.notOk(rb.citedNotes.some((n: { noteId: string }) => n.noteId === roadmap.noteId), "b does not see a's notes")
    t.same(rb.citedSegments.every((id: string) => id === secret.segments[0]!.id), true)
    t.equal((await askNote({ question: 'budget?' }, roadmap.noteId, b.headers)).statusCode, 404, "a's note is not found for b")
    const session = (await askAll({ question: 'budget?' })).json().sessionId
    const before = await balance(s, b.accountId)
    const foreign = await askAll({ question: 'budget?', sessionId: session }, b.headers)
    t.equal(foreign.statusCode, 404, "a's session is unknown to b")
    t.equal(foreign.json().error, 'not_found')
    t.equal(await balance(s, b.accountId), before, 'and costs nothing')
  })

  t.test('errors: 400 for a bad question, 409 note_not_ready, 402 insufficient_credits', async (t) => {
    for (const body of [{}, { question: '' }, { question: '   ' }, { question: 'x'.repeat(4001) }, { question: 'ok', sessionId: 'nope' }]) {
      t.equal((await askNote(body)).statusCode, 400, JSON.stringify(body).slice(0, 40))
      t.equal((await askAll(body)).json().error, 'invalid_request')
    }
    t.equal((await askNote({ question: 'x'.repeat(4000) })).statusCode, 200, '4000 characters are allowed')
    const processing = await appendNote(s, a.accountId, { processing: true })
    const p = await askNote({ question: 'anything?' }, processing.noteId)
    t.equal(p.statusCode, 409)
    t.equal(p.json().error, 'note_not_ready')
    const poor = await s.account('pro')
    const note = await appendNote(s, poor.accountId, { lines: [['A', 'Hello there, the budget is small.']] })
    await s.services.credits.charge(poor.accountId, { operation: 'test', cost: 4995 })
    for (const r of [await askNote({ question: 'budget?' }, note.noteId, poor.headers), await askAll({ question: 'budget?' }, poor.headers)]) {
      t.equal(r.statusCode, 402)
      t.match(r.json(), { error: 'insufficient_credits', balance: 5, required: 10 })
    }
    t.same((await moves(s, poor.accountId, 'ask')).charges, [])
  })
})
