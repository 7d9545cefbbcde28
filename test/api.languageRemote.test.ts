// The OpenAI-compatible path: the service configured with LLM_BASE_URL talks to a local server
// speaking /v1/chat/completions (test/support/openaiServer.ts). Structured output is validated
// against the contract's schemas with one retry; failures are refunded in the ledger.
import t from 'tap'
import { testService } from './support/service.ts'
import { startOpenAiServer, chatCompletion, type RecordedRequest } from './support/openaiServer.ts'
import { appendNote, quotedTimes } from './support/notes.ts'
import { balance, holds, moves } from './support/ledger.ts'
import { analysisStream, outlineProblems } from '../domain/analysis/analysis.ts'
import { mmss } from '../domain/language/time.ts'

const json = { 'content-type': 'application/json' }

const schemaName = (r: RecordedRequest): string => r.json().response_format?.json_schema?.name
const systemText = (r: RecordedRequest): string => r.json().messages[0].content
const lastUser = (r: RecordedRequest): string => r.json().messages.at(-1).content

function analysisFor(startMs: number) {
  return {
    summary: 'The team moved the launch to April.',
    keyPoints: ['Launch moves to April'],
    actionItems: [{ text: 'Send the new plan', assignee: 'Ana', deadline: 'Friday' }],
    decisions: ['Launch in April'],
    questions: [],
    topics: ['launch'],
    // Inside the second segment, not at its start: the service snaps it.
    anchors: { keyPoints: [startMs + 1200], actionItems: [startMs], decisions: [null], questions: [] },
    sections: null,
    mindmap: 'mindmap\n  root((Launch))',
  }
}

t.test('remote language engine', async (t) => {
  let respond: (r: RecordedRequest) => { status?: number; json?: unknown; body?: string } = () => ({ status: 500, json: { error: { message: 'unset' } } })
  const server = await startOpenAiServer((r) => respond(r))
  t.teardown(server.close)
  const s = await testService({ env: { LLM_BASE_URL: server.baseUrl, LLM_MODEL: 'test-model', LLM_API_KEY: 'k' } })
  t.teardown(s.close)
  t.equal(s.services.language.info.engine, 'openai-compatible', 'LLM_BASE_URL selects the remote engine')
  const a = await s.account('pro')
  const { noteId, segments } = await appendNote(s, a.accountId, {
    title: 'Launch sync',
    language: 'en',
    lines: [
      ['A', 'Welcome to the launch sync.'],
      ['B', 'We decided to launch in April. Ana will send the new plan by Friday.'],
      ['A', 'Good, the budget stays the same.'],
    ],
  })
  const post = (body: unknown) => s.inject({ method: 'POST', url: `/v1/notes/${noteId}/analysis`, headers: { ...a.headers, ...json }, payload: JSON.stringify(body) })
  const ok = (content: unknown) => ({ json: chatCompletion(typeof content === 'string' ? content : JSON.stringify(content), 'test-model-2026') })

  t.test('a valid answer: the analysis is stored with the model that answered; anchors snap to segment starts', async (t) => {
    server.requests.length = 0
    respond = () => ok(analysisFor(segments[1]!.startMs))
    const r = await post({ template: 'generic' })
    t.equal(r.statusCode, 200)
    const an = r.json().analyses[0]
    t.match(an, { template: 'generic', model: 'test-model-2026', summary: 'The team moved the launch to April.' })
    t.same(an.anchors, { keyPoints: [segments[1]!.startMs], actionItems: [segments[1]!.startMs], decisions: [null], questions: [] })
    t.equal(server.requests.length, 1)
    const req = server.requests[0]!
    t.equal(req.path, '/v1/chat/completions')
    t.equal(req.headers.authorization, 'Bearer k')
    t.equal(schemaName(req), 'analysis')
    t.match(req.json().response_format.json_schema.schema.properties, { summary: Object, anchors: Object })
    t.match(lastUser(req), /\[startMs=9000 \| 00:09 \| B\] We decided to launch in April/)
    const events = (await s.services.events.readStream(analysisStream.of(noteId))).events
    t.match(events.at(-1), { type: 'AnalysisGenerated', data: { engine: 'openai-compatible', model: 'test-model-2026', version: 'prompts-1' } })
  })

  t.test('the model reads each line with the name in use of its speaker, else the letter, and is told which is which', async (t) => {
    const renamed = await s.inject({ method: 'PATCH', url: `/v1/notes/${noteId}/speakers/B`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ name: 'Bruno' }) })
    t.equal(renamed.statusCode, 200)
    server.requests.length = 0
    respond = () => ok(analysisFor(segments[1]!.startMs))
    t.equal((await post({ template: 'generic' })).statusCode, 200)
    const req = server.requests[0]!
    t.match(lastUser(req), /\[startMs=9000 \| 00:09 \| Bruno\] We decided to launch in April/)
    t.match(lastUser(req), /\[startMs=0 \| 00:00 \| A\] Welcome/)
    t.match(systemText(req), /diarization letter \(A, B, \.\.\.\) when the speaker has no name; in text, write such a speaker as "Speaker A"/)
    const events = (await s.services.events.readStream(analysisStream.of(noteId))).events
    t.match(events.at(-1), { type: 'AnalysisGenerated', data: { speakers: { B: 'Bruno' } } }, 'the analysis records the names it was made with')
  })

  t.test('an invalid answer is sent back once with the problems; a valid second answer is kept', async (t) => {
    server.requests.length = 0
    let n = 0
    respond = () => (n++ === 0 ? ok('{"summary": 42') : ok(analysisFor(segments[1]!.startMs)))
    const r = await post({ template: 'sales' })
    t.equal(r.statusCode, 200)
    t.same(r.json().report, { ok: ['sales'], failed: [] })
    t.equal(server.requests.length, 2)
    t.match(lastUser(server.requests[1]!), /That answer is not valid: not valid JSON/)
  })

  t.test('a template that is invalid twice fails and is refunded; the others come out', async (t) => {
    const before = await balance(s, a.accountId)
    const heldBefore = (await holds(s, a.accountId, 'analysis')).reserved.length
    // Valid JSON, wrong shape: anchors not aligned with the lists.
    respond = (r) => (/"legal" template/.test(systemText(r)) ? ok({ ...analysisFor(0), anchors: { keyPoints: [], actionItems: [], decisions: [], questions: [] } }) : ok(analysisFor(segments[1]!.startMs)))
    const r = await post({ templates: ['medical', 'legal'] })
    t.equal(r.statusCode, 200)
    t.same(r.json().report.ok, ['medical'])
    t.match(r.json().report.failed, [{ template: 'legal', error: 'llm_invalid_json', message: /anchors\.keyPoints must have one entry per item/ }])
    t.equal(await balance(s, a.accountId), before - 100, 'only the template that came out is paid')
    const { reserved, captured, released } = await holds(s, a.accountId, 'analysis')
    t.equal(reserved.length - heldBefore, 1, 'one hold for the request')
    t.match(reserved.at(-1), { amount: 200 })
    t.match(captured.at(-1), { reservationId: reserved.at(-1)!.reservationId, part: 'medical', cost: 100 })
    t.match(released.at(-1), { reservationId: reserved.at(-1)!.reservationId, amount: 100, reason: /analysis failed for legal/ })
    const events = (await s.services.events.readStream(analysisStream.of(noteId))).events
    t.match(events.at(-1), { type: 'AnalysisFailed', data: { template: 'legal', error: 'llm_invalid_json', engine: 'openai-compatible' } })
  })

  t.test('when every template fails: 502 llm_invalid_json, every charge refunded', async (t) => {
    const before = await balance(s, a.accountId)
    respond = () => ok('I cannot answer in JSON, sorry.')
    const r = await post({ templates: ['podcast', 'therapy'] })
    t.equal(r.statusCode, 502)
    t.equal(r.json().error, 'llm_invalid_json')
    t.equal(await balance(s, a.accountId), before)
    const { reserved, released } = await holds(s, a.accountId, 'analysis')
    t.match(released.at(-1), { reservationId: reserved.at(-1)!.reservationId, amount: 200 }, 'the whole hold released')
    respond = () => ({ status: 503, json: { error: { message: 'overloaded' } } })
    const down = await post({ template: 'education' })
    t.equal(down.statusCode, 502)
    t.equal(down.json().error, 'llm_invalid_json')
    t.match(down.json().failed, [{ template: 'education', error: 'engine_unavailable' }])
    t.equal(await balance(s, a.accountId), before)
  })

  t.test('outline: chapters from the model are snapped to segment starts and closed to cover the audio', async (t) => {
    respond = () => ok({ chapters: [{ startMs: 9700, headline: 'Decisions' }, { startMs: 0, headline: 'Welcome' }, { startMs: 999_999, headline: 'Beyond the end' }] })
    const r = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/outline?generate=1`, headers: a.headers })
    t.equal(r.statusCode, 200)
    t.same(r.json().outline, [
      { startMs: 0, endMs: 9000, headline: 'Welcome' },
      { startMs: 9000, endMs: segments[2]!.endMs, headline: 'Decisions' },
    ])
    t.same(outlineProblems(r.json().outline, segments[2]!.endMs), [])
  })

  t.test('outline: a model that fails twice leaves an attempt, refunded', async (t) => {
    const other = await appendNote(s, a.accountId, { lines: [['A', 'Just one thing to say today about the budget.']] })
    const before = await balance(s, a.accountId)
    respond = () => ok({ chapters: [] })
    const r = await s.inject({ method: 'GET', url: `/v1/notes/${other.noteId}/outline?generate=1`, headers: a.headers })
    t.equal(r.statusCode, 200)
    t.match(r.json(), { outline: [], generated: false, attemptedAt: String })
    t.equal(await balance(s, a.accountId), before)
    const { charges, refunds } = await moves(s, a.accountId, 'outline')
    t.equal(refunds.at(-1)!.chargeId, charges.at(-1)!.chargeId)
  })

  t.test('ask: the answer quotes passage labels; cited segments are exactly the quoted ones; follow-ups carry the earlier turns', async (t) => {
    server.requests.length = 0
    // Each passage says who speaks: B was renamed Bruno above.
    respond = (r) => {
      const label = /(\[\d{2}:\d{2}\]) \(id [0-9a-f-]+, Bruno\): We decided/.exec(lastUser(r))?.[1]
      return ok({ answer: `The launch is in April ${label}.`, citedSegments: [segments[0]!.id] })
    }
    const first = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/ask`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ question: 'When do we launch?' }) })
    t.equal(first.statusCode, 200)
    t.same(first.json().citedSegments, [segments[1]!.id], 'what is quoted is cited, not what the model listed')
    t.same(quotedTimes(first.json().answer).map((q) => q.time), [mmss(segments[1]!.startMs)])
    t.equal(schemaName(server.requests[0]!), 'answer')
    const follow = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/ask`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ question: 'And who sends the plan?', sessionId: first.json().sessionId }) })
    t.equal(follow.statusCode, 200)
    const messages = server.requests.at(-1)!.json().messages
    t.match(messages.slice(1, 3), [
      { role: 'user', content: 'When do we launch?' },
      { role: 'assistant', content: first.json().answer },
    ])
  })

  t.test('ask: 502 chat_failed when the model does not answer or quotes what it was not given; refunded', async (t) => {
    const before = await balance(s, a.accountId)
    respond = () => ({ status: 500, json: { error: { message: 'boom' } } })
    const r1 = await s.inject({ method: 'POST', url: '/v1/ask', headers: { ...a.headers, ...json }, payload: JSON.stringify({ question: 'When do we launch?' }) })
    t.equal(r1.statusCode, 502)
    t.equal(r1.json().error, 'chat_failed')
    respond = () => ok({ answer: 'It is in April [Other note | 12:34].', citedSegments: [] })
    const r2 = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/ask`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ question: 'When do we launch?' }) })
    t.equal(r2.statusCode, 502)
    t.equal(r2.json().error, 'chat_failed')
    t.equal(await balance(s, a.accountId), before)
    const { charges, refunds } = await moves(s, a.accountId, 'ask')
    t.same(refunds.slice(-2).map((x) => x.chargeId), charges.slice(-2).map((x) => x.chargeId))
  })

  t.test('deliverables: written by the model, rendered into the file; a failure is 502 chat_failed, refunded', async (t) => {
    respond = (r) =>
      schemaName(r) === 'deliverable'
        ? ok({ title: 'ignored for emails', subject: 'Launch: next steps', sections: [{ heading: '', paragraphs: ['Hi team,'], bullets: [] }, { heading: 'Next steps', paragraphs: [], bullets: ['Ana sends the new plan by Friday'] }] })
        : ok(analysisFor(segments[1]!.startMs))
    const r = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/deliverables`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ kind: 'email', template: 'next_steps', locale: 'en' }) })
    t.equal(r.statusCode, 201)
    t.match(r.json().deliverable, { title: 'Launch: next steps', model: 'test-model-2026', content: /Next steps:\n- Ana sends the new plan by Friday/ })
    const before = await balance(s, a.accountId)
    respond = () => ok({ nothing: true })
    const bad = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/deliverables`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ kind: 'document', template: 'project_brief', locale: 'es' }) })
    t.equal(bad.statusCode, 502)
    t.equal(bad.json().error, 'chat_failed')
    t.equal(await balance(s, a.accountId), before)
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/deliverables`, headers: a.headers })).json().items.length, 1, 'nothing stored')
  })
})

t.test('LANGUAGE_ENGINE=local keeps the local engine even with an endpoint configured', async (t) => {
  const s = await testService({ env: { LLM_BASE_URL: 'http://127.0.0.1:9/v1', LANGUAGE_ENGINE: 'local' } })
  t.teardown(s.close)
  t.equal(s.services.language.info.engine, 'local')
})
