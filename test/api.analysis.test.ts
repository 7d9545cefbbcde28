// POST/GET /v1/notes/{id}/analysis and GET /v1/notes/{id}/outline with the local engine (spec
// parts 2, 3, 4, 7, 8): statuses, errors, charges and refunds in the ledger, history, outline
// invariants. (Failing engines are exercised in api.languageRemote.test.ts.)
import t from 'tap'
import { testService } from './support/service.ts'
import { appendNote } from './support/notes.ts'
import { balance, holds, moves } from './support/ledger.ts'
import { MEETINGS } from './fixtures/meetings.ts'
import { analysisStream } from '../domain/analysis/analysis.ts'
import { outlineProblems } from '../domain/analysis/analysis.ts'
import { TEMPLATES } from '../contract/analysis.ts'

const json = { 'content-type': 'application/json' }

t.test('analysis', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const m = MEETINGS[2]!
  const { noteId } = await appendNote(s, a.accountId, { title: m.title, language: 'en', lines: m.lines })
  const post = (body: unknown, id = noteId, headers = a.headers) => s.inject({ method: 'POST', url: `/v1/notes/${id}/analysis`, headers: { ...headers, ...json }, payload: JSON.stringify(body) })
  const get = (query = '', id = noteId, headers = a.headers) => s.inject({ method: 'GET', url: `/v1/notes/${id}/analysis${query}`, headers })

  t.test('given a ready note, when one template is generated, then 200 with the analysis, report.ok, and 100 credits charged', async (t) => {
    const before = await balance(s, a.accountId)
    const r = await post({ template: 'meeting_minutes' })
    t.equal(r.statusCode, 200)
    const body = r.json()
    t.same(body.report, { ok: ['meeting_minutes'], failed: [] })
    t.equal(body.noteId, noteId)
    const an = body.analyses.find((x: { template: string }) => x.template === 'meeting_minutes')
    t.match(an, { template: 'meeting_minutes', model: 'local-extractive', sections: null, anchors: { keyPoints: Array } })
    t.ok(an.actionItems.some((x: { assignee: string }) => x.assignee === 'Priya'))
    t.equal(await balance(s, a.accountId), before - 100)
    const detail = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json()
    t.same(detail.aiNotes.map((x: { template: string }) => x.template), ['meeting_minutes'], 'the note detail embeds it')
  })

  t.test('template and templates together: the union, template first, each once, 100 credits per template', async (t) => {
    const before = await balance(s, a.accountId)
    const r = await post({ template: 'debate', templates: ['generic', 'debate', 'sales'] })
    t.equal(r.statusCode, 200)
    t.same(r.json().report.ok, ['debate', 'generic', 'sales'])
    t.equal(await balance(s, a.accountId), before - 300)
    const debate = r.json().analyses.find((x: { template: string }) => x.template === 'debate')
    t.ok(debate.sections && Array.isArray(debate.sections.positions), 'debate has sections')
  })

  t.test('every template of the spec can be generated at once up to 8; more is 400 and costs nothing', async (t) => {
    const before = await balance(s, a.accountId)
    for (const body of [{ templates: [...TEMPLATES].slice(0, 9) }, { template: 'therapy', templates: [...TEMPLATES].slice(0, 8).filter((x) => x !== 'therapy') }, {}, { templates: [] }, { template: 'poetry' }, { templates: ['generic', 'nope'] }, 'x']) {
      const r = await post(body)
      t.equal(r.statusCode, 400, JSON.stringify(body).slice(0, 80))
      t.equal(r.json().error, 'invalid_request')
    }
    t.equal(await balance(s, a.accountId), before)
    const all = await post({ templates: [...TEMPLATES].slice(6, 14) })
    t.equal(all.statusCode, 200)
    t.equal(all.json().report.ok.length, 8)
  })

  t.test('GET: the latest per template, a filter by template, 404 analysis_not_generated with template', async (t) => {
    const fresh = await appendNote(s, a.accountId, { lines: MEETINGS[0]!.lines, language: 'es' })
    t.same((await get('', fresh.noteId)).json(), { noteId: fresh.noteId, analyses: [] })
    const miss = await get('?template=legal', fresh.noteId)
    t.equal(miss.statusCode, 404)
    t.match(miss.json(), { error: 'analysis_not_generated', template: 'legal' })
    await post({ templates: ['legal', 'generic'] }, fresh.noteId)
    const list = (await get('', fresh.noteId)).json()
    t.same(list.analyses.map((x: { template: string }) => x.template), ['generic', 'legal'])
    t.notOk('report' in list, 'report only on POST')
    const one = (await get('?template=legal', fresh.noteId)).json()
    t.same(one.analyses.map((x: { template: string }) => x.template), ['legal'])
    t.equal((await get('?template=nonsense', fresh.noteId)).statusCode, 400)
  })

  t.test('regenerating keeps the history: one event per generation with template, engine, model and version', async (t) => {
    const fresh = await appendNote(s, a.accountId, { lines: MEETINGS[1]!.lines, language: 'es' })
    await post({ template: 'coaching' }, fresh.noteId)
    await post({ template: 'coaching' }, fresh.noteId)
    const stream = await s.services.events.readStream(analysisStream.of(fresh.noteId))
    const generated = stream.events.filter((e) => e.type === 'AnalysisGenerated')
    t.equal(generated.length, 2)
    for (const e of generated) t.match(e.data, { template: 'coaching', engine: 'local', model: 'local-extractive', version: '1.0.0', chargeId: String })
    t.equal((await get('', fresh.noteId)).json().analyses.length, 1, 'GET shows the latest only')
    const history = await s.inject({ method: 'GET', url: `/v1/notes/${fresh.noteId}/analysis/history?template=coaching`, headers: a.headers })
    t.equal(history.statusCode, 200)
    t.same(history.json().generations.map((g: { latest: boolean }) => g.latest), [true, false])
  })

  t.test('409 note_not_ready for a note still processing; 404 for a note of another account or a malformed id', async (t) => {
    const processing = await appendNote(s, a.accountId, { processing: true })
    const before = await balance(s, a.accountId)
    const r = await post({ template: 'generic' }, processing.noteId)
    t.equal(r.statusCode, 409)
    t.equal(r.json().error, 'note_not_ready')
    t.equal(await balance(s, a.accountId), before, 'nothing charged')
    const b = await s.account('pro')
    t.equal((await post({ template: 'generic' }, noteId, b.headers)).statusCode, 404)
    t.equal((await get('', noteId, b.headers)).statusCode, 404)
    t.equal((await post({ template: 'generic' }, 'not-a-uuid')).statusCode, 404)
  })

  t.test('402 upgrade_required when the credits do not cover every template; nothing is held or charged', async (t) => {
    const poor = await s.account('pro')
    const note = await appendNote(s, poor.accountId, { lines: m.lines })
    await s.services.credits.charge(poor.accountId, { operation: 'test', cost: 4850 })
    t.equal(await balance(s, poor.accountId), 150)
    const r = await post({ templates: ['generic', 'sales'] }, note.noteId, poor.headers)
    t.equal(r.statusCode, 402)
    t.match(r.json(), { error: 'upgrade_required', balance: 150, required: 200 })
    t.same(await holds(s, poor.accountId, 'analysis'), { reserved: [], captured: [], released: [] }, 'the whole price is held at once or not at all')
    t.same((await moves(s, poor.accountId, 'analysis')).charges, [])
    t.equal(await balance(s, poor.accountId), 150)
    await s.services.credits.charge(poor.accountId, { operation: 'test', cost: 100 })
    const none = await post({ template: 'generic' }, note.noteId, poor.headers)
    t.equal(none.statusCode, 402)
    t.match(none.json(), { error: 'upgrade_required', balance: 50, required: 100 })
    t.equal((await holds(s, poor.accountId, 'analysis')).reserved.length, 0, 'nothing held when not even one template fits')
  })

  t.test('the contract publishes the analysis price and the routes', async (t) => {
    const doc = (await s.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    const post = doc.paths['/v1/notes/{id}/analysis'].post
    t.equal(post['x-service-credits'], 100)
    t.ok(post.responses['402'] && post.responses['409'] && post.responses['502'])
    t.same(doc.components.schemas.Analysis.properties.template.enum, [...TEMPLATES])
    t.ok(doc.paths['/v1/notes/{id}/outline'].get.responses['402'])
    t.equal(doc.paths['/v1/notes/{id}/outline'].get['x-service-credits'], 50)
  })
})

t.test('outline', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  // About 12 minutes in four parts with their own vocabulary.
  const parts = [
    'the quarterly budget, invoices and travel costs',
    'hiring two engineers and the interview process',
    'the spring marketing campaign and the newsletter',
    'the security audit, passwords and certificates',
  ]
  const lines: [string, string][] = Array.from({ length: 60 }, (_, i) => [i % 2 ? 'B' : 'A', `Now about ${parts[Math.floor(i / 15)]}: point ${i} keeps us busy with ${parts[Math.floor(i / 15)]!.split(' ').slice(-2).join(' ')}.`])
  const { noteId, segments } = await appendNote(s, a.accountId, { lines, gapMs: 12_000, title: 'Weekly sync' })
  const get = (q = '', id = noteId, headers = a.headers) => s.inject({ method: 'GET', url: `/v1/notes/${id}/outline${q}`, headers })

  t.test('reading is free and shows no outline before one is generated', async (t) => {
    const before = await balance(s, a.accountId)
    for (const q of ['', '?generate=0']) {
      const r = await get(q)
      t.equal(r.statusCode, 200)
      t.same(r.json(), { noteId, outline: [], attemptedAt: null, generated: false })
    }
    t.equal(await balance(s, a.accountId), before)
  })

  t.test('generate=1 makes chapters that cover the audio in order without overlap, for 50 credits, once', async (t) => {
    const before = await balance(s, a.accountId)
    const r = await get('?generate=1')
    t.equal(r.statusCode, 200)
    const o = r.json()
    t.equal(o.generated, true)
    t.ok(Date.parse(o.attemptedAt) > 0)
    const duration = segments[segments.length - 1]!.endMs
    t.same(outlineProblems(o.outline, duration), [])
    t.ok(o.outline.length >= 2, `${o.outline.length} chapters`)
    const starts = new Set(segments.map((x) => x.startMs))
    for (const c of o.outline.slice(1)) t.ok(starts.has(c.startMs), 'chapters start at segment starts')
    t.equal(await balance(s, a.accountId), before - 50)
    const again = await get('?generate=1')
    t.same(again.json(), o, 'the same outline')
    t.equal(await balance(s, a.accountId), before - 50, 'not charged again')
    t.same((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json().outline, o.outline, 'the note detail shows it')
  })

  t.test('two generations at once: one outline, one charge kept, the other refunded', async (t) => {
    const b = await s.account('pro')
    const note = await appendNote(s, b.accountId, { lines, gapMs: 12_000 })
    const [r1, r2] = await Promise.all([get('?generate=1', note.noteId, b.headers), get('?generate=1', note.noteId, b.headers)])
    t.same(r1.json().outline, r2.json().outline)
    const { charges, refunds } = await moves(s, b.accountId, 'outline')
    t.equal(charges.length - refunds.length, 1, 'exactly one outline paid for')
    t.equal(await balance(s, b.accountId), 5000 - 50)
  })

  t.test('highlights and markers: analysis anchors and chapters with their times (extensions for the MCP tools)', async (t) => {
    await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/analysis`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ template: 'generic' }) })
    const r = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/highlights`, headers: a.headers })
    t.equal(r.statusCode, 200)
    const hs = r.json().highlights as { kind: string; startMs: number; time: string; template: string | null }[]
    const starts = new Set([0, ...segments.map((x) => x.startMs)])
    t.ok(hs.some((h) => h.kind === 'chapter') && hs.some((h) => h.kind === 'key_point' && h.template === 'generic'))
    for (const h of hs) {
      t.ok(starts.has(h.startMs), `${h.kind} at a segment start`)
      t.equal(h.time, `${String(Math.floor(h.startMs / 60000)).padStart(2, '0')}:${String(Math.floor(h.startMs / 1000) % 60).padStart(2, '0')}`)
    }
    t.same(hs.map((h) => h.startMs), hs.map((h) => h.startMs).sort((x, y) => x - y), 'by time')
    const outline = (await get()).json().outline
    const markers = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/markers`, headers: a.headers })).json().markers
    t.same(markers.map((m: { startMs: number; endMs: number; title: string }) => [m.startMs, m.endMs, m.title]), outline.map((c: { startMs: number; endMs: number; headline: string }) => [c.startMs, c.endMs, c.headline]))
    const other = await s.account('pro')
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/highlights`, headers: other.headers })).statusCode, 404)
  })

  t.test('402 insufficient_credits; 409 note_not_ready even to read; 400 for another generate value', async (t) => {
    const poor = await s.account('pro')
    const note = await appendNote(s, poor.accountId, { lines })
    await s.services.credits.charge(poor.accountId, { operation: 'test', cost: 4960 })
    const r = await get('?generate=1', note.noteId, poor.headers)
    t.equal(r.statusCode, 402)
    t.match(r.json(), { error: 'insufficient_credits', balance: 40, required: 50 })
    t.same((await get('', note.noteId, poor.headers)).json().generated, false)
    const processing = await appendNote(s, a.accountId, { processing: true })
    for (const q of ['', '?generate=1']) {
      const p = await get(q, processing.noteId)
      t.equal(p.statusCode, 409)
      t.equal(p.json().error, 'note_not_ready')
    }
    t.equal((await get('?generate=2')).statusCode, 400)
    t.equal((await get('', noteId, poor.headers)).statusCode, 404)
  })
})
