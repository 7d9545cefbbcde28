// The language features on MongoDB read models (FerretDB in the test run): the segment index's
// postings projection (`postings.p_<term>`), `$in` over the terms array, the analysis and
// deliverable read models. MONGO_URL unset: nothing to run (npm test always sets it).
import t from 'tap'
import { testService } from './support/service.ts'
import { appendNote, quotedTimes } from './support/notes.ts'
import { MEETINGS } from './fixtures/meetings.ts'
import { outlineProblems } from '../domain/analysis/analysis.ts'
import { mmss } from '../domain/language/time.ts'

const json = { 'content-type': 'application/json' }

if (!process.env.MONGO_URL) {
  t.skip('MONGO_URL not set: this suite runs under npm test, which starts FerretDB', () => {})
} else {
  t.test('analysis, outline, ask and deliverables on MongoDB read models', async (t) => {
    const s = await testService({ mongo: true })
    t.teardown(s.close)
    const a = await s.account('pro')
    const b = await s.account('pro')
    const m = MEETINGS[3]!
    const note = await appendNote(s, a.accountId, { title: m.title, language: 'en', lines: m.lines })
    await appendNote(s, b.accountId, { title: 'Other account', lines: [['A', 'The certificate renewal of the other account is secret.']] })

    const an = await s.inject({ method: 'POST', url: `/v1/notes/${note.noteId}/analysis`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ templates: ['meeting_minutes', 'generic'] }) })
    t.equal(an.statusCode, 200)
    t.same(an.json().analyses.map((x: { template: string }) => x.template), ['generic', 'meeting_minutes'])
    const one = await s.inject({ method: 'GET', url: `/v1/notes/${note.noteId}/analysis?template=generic`, headers: a.headers })
    t.equal(one.json().analyses.length, 1)

    const o = await s.inject({ method: 'GET', url: `/v1/notes/${note.noteId}/outline?generate=1`, headers: a.headers })
    t.equal(o.statusCode, 200)
    t.same(outlineProblems(o.json().outline, note.segments.at(-1)!.endMs), [])

    const ask = await s.inject({ method: 'POST', url: '/v1/ask', headers: { ...a.headers, ...json }, payload: JSON.stringify({ question: 'What about certificate renewal?' }) })
    t.equal(ask.statusCode, 200)
    const body = ask.json()
    t.ok(body.citedSegments.length > 0)
    const byId = new Map(note.segments.map((x) => [x.id, x]))
    for (const id of body.citedSegments) t.ok(byId.has(id), 'only the caller’s segments')
    t.same(quotedTimes(body.answer).map((q) => q.time).sort(), body.citedSegments.map((id: string) => mmss(byId.get(id)!.startMs)).sort())
    t.same(body.citedNotes, [{ noteId: note.noteId, title: m.title }])

    const d = await s.inject({ method: 'POST', url: `/v1/notes/${note.noteId}/deliverables`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ kind: 'document', template: 'legal_acta', locale: 'es' }) })
    t.equal(d.statusCode, 201)
    const list = await s.inject({ method: 'GET', url: `/v1/notes/${note.noteId}/deliverables`, headers: a.headers })
    t.equal(list.json().items.length, 1)
    const file = await s.inject({ method: 'GET', url: new URL(d.json().deliverable.downloadUrl).pathname, headers: a.headers })
    t.equal(file.statusCode, 200)
    t.equal(file.rawPayload.subarray(0, 2).toString(), 'PK')
  })
}
