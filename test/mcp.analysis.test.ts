// The MCP tools over analyses, outlines and questions (spec parts 1, 4 and 8), driven through the
// SDK's client over streamable HTTP: generate_ai_notes, generate_outline, ask_note spend exactly
// what their REST twins spend (the same ledger entries, the same refunds), get_outline only
// reads, and list_highlights / list_markers answer what their REST twins answer. The language
// engine is the OpenAI-compatible one against a scripted local server, so failures can be made.
import t from 'tap'
import { mcpTestService, structured, toolErrorBody } from './support/mcp.ts'
import { startOpenAiServer, chatCompletion, type RecordedRequest } from './support/openaiServer.ts'
import { appendNote } from './support/notes.ts'
import { balance, ledgerShape } from './support/ledger.ts'
import { TOOL_COSTS } from '../domain/mcp/tools.ts'

const json = { 'content-type': 'application/json' }
const LINES: [string, string][] = [
  ['A', 'Welcome to the launch sync.'],
  ['B', 'We decided to launch in April. Ana will send the new plan by Friday.'],
  ['A', 'Good, the budget stays the same.'],
  ['B', 'One question remains: do we hire a second designer?'],
]

const schemaName = (r: RecordedRequest): string => r.json().response_format?.json_schema?.name
const systemText = (r: RecordedRequest): string => r.json().messages[0].content
const lastUser = (r: RecordedRequest): string => r.json().messages.at(-1).content
const ok = (content: unknown) => ({ json: chatCompletion(JSON.stringify(content), 'test-model') })

/** A valid analysis anchored at the second segment (9 s into the note). */
const analysis = {
  summary: 'The team moved the launch to April.',
  keyPoints: ['Launch moves to April'],
  actionItems: [{ text: 'Send the new plan', assignee: 'Ana', deadline: 'Friday' }],
  decisions: ['Launch in April'],
  questions: ['Hire a second designer?'],
  topics: ['launch'],
  anchors: { keyPoints: [9000], actionItems: [9000], decisions: [9000], questions: [27000] },
  sections: null,
  mindmap: null,
}

/** The answers of a working model; `failing` templates get an answer that breaks the contract. */
function model(failing: string[] = []) {
  return (r: RecordedRequest) => {
    const name = schemaName(r)
    if (name === 'analysis') {
      const bad = failing.some((tpl) => new RegExp(`"${tpl}" template`).test(systemText(r)))
      return ok(bad ? { ...analysis, anchors: { keyPoints: [], actionItems: [], decisions: [], questions: [] } } : analysis)
    }
    if (name === 'outline') return ok({ chapters: [{ startMs: 0, headline: 'Welcome' }, { startMs: 9000, headline: 'The launch' }, { startMs: 27000, headline: 'Open questions' }] })
    if (name === 'answer') {
      // Quote the first passage the service handed over, whatever its label looks like.
      const first = /^(\[[^\]\n]+\]) \(id ([0-9a-f-]+)/m.exec(lastUser(r))
      return ok({ answer: `The launch is in April ${first?.[1]}.`, citedSegments: [first?.[2]] })
    }
    return { status: 400, json: { error: { message: `unexpected schema ${name}` } } }
  }
}
const down = () => ({ status: 500, json: { error: { message: 'the model is down' } } })

t.test('analysis, outline and ask over MCP', async (t) => {
  let respond: (r: RecordedRequest) => { status?: number; json?: unknown } = model()
  const llm = await startOpenAiServer((r) => respond(r))
  t.teardown(llm.close)
  const s = await mcpTestService({ env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'test-model' } })
  t.teardown(s.close)
  t.equal(s.services.language.info.engine, 'openai-compatible')
  const endpoint = `${s.base}/mcp/stream`

  /** Two pro accounts with the same note: one works through REST, the other through MCP. */
  async function twins(lines = LINES) {
    const viaRest = await s.account('pro')
    const viaMcp = await s.account('pro')
    const restNote = (await appendNote(s, viaRest.accountId, { title: 'Launch sync', language: 'en', lines })).noteId
    const mcpNote = (await appendNote(s, viaMcp.accountId, { title: 'Launch sync', language: 'en', lines })).noteId
    const rest = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      s.inject({ method, url, headers: { ...viaRest.headers, ...(body ? json : {}) }, ...(body ? { payload: JSON.stringify(body) } : {}) })
    return { viaRest, viaMcp, restNote, mcpNote, rest, mcp: await s.connect(endpoint, viaMcp.headers) }
  }
  /** A body without what differs between twins (ids, times, sessions). */
  const comparable = (body: Record<string, any>) => JSON.parse(JSON.stringify(body, (k, v) => (['noteId', 'updatedAt', 'attemptedAt', 'sessionId', 'citedSegments'].includes(k) ? undefined : v)))

  t.test('generate_ai_notes: 100 per template, refunded for each that fails; the same ledger entries as POST /v1/notes/{id}/analysis', async (t) => {
    const w = await twins()
    respond = model(['legal'])
    const r = await w.rest('POST', `/v1/notes/${w.restNote}/analysis`, { template: 'generic', templates: ['legal'] })
    t.equal(r.statusCode, 200)
    const m = structured(await w.mcp.callTool({ name: 'generate_ai_notes', arguments: { noteId: w.mcpNote, template: 'generic', templates: ['legal'] } }))
    t.match(m, { noteId: w.mcpNote, report: { ok: ['generic'], failed: [{ template: 'legal', error: 'llm_invalid_json' }] } })
    t.same(comparable(m), comparable(r.json()), 'the same result as REST')
    const restLedger = await ledgerShape(s, w.viaRest.accountId)
    t.same(await ledgerShape(s, w.viaMcp.accountId), restLedger)
    t.match(restLedger.slice(-3), [
      { type: 'CreditsReserved', operation: TOOL_COSTS.generate_ai_notes.price!.operation, delta: -200 },
      { type: 'CreditsCaptured', operation: 'analysis', delta: 0 },
      { type: 'CreditsReleased', operation: 'analysis', delta: 100, balanceAfter: 4900 },
    ])

    // Every template failing: the tool error REST answers with 502, and every charge back.
    respond = model(['podcast', 'therapy'])
    const failed = await w.rest('POST', `/v1/notes/${w.restNote}/analysis`, { templates: ['podcast', 'therapy'] })
    t.equal(failed.statusCode, 502)
    t.match(toolErrorBody(await w.mcp.callTool({ name: 'generate_ai_notes', arguments: { noteId: w.mcpNote, templates: ['podcast', 'therapy'] } })), { error: 'llm_invalid_json', failed: [{ template: 'podcast' }, { template: 'therapy' }] })
    t.same(await ledgerShape(s, w.viaMcp.accountId), await ledgerShape(s, w.viaRest.accountId))
    t.equal(await balance(s, w.viaMcp.accountId), 4900)
  })

  t.test('generate_ai_notes validates like the REST body: template and/or templates, at most 8, known templates', async (t) => {
    const w = await twins()
    for (const args of [{}, { templates: [] }, { template: 'poetry' }, { templates: ['generic', 'sales', 'legal', 'medical', 'journalism', 'education', 'coaching', 'therapy', 'podcast'] }]) {
      t.equal((await w.mcp.callTool({ name: 'generate_ai_notes', arguments: { noteId: w.mcpNote, ...args } })).isError, true, JSON.stringify(args))
    }
    t.equal((await ledgerShape(s, w.viaMcp.accountId)).length, 1, 'nothing charged: only the monthly grant')
    t.equal(await balance(s, w.viaMcp.accountId), 5000)
  })

  t.test('generate_ai_notes on the free plan: upgrade_required with balance and required, nothing charged', async (t) => {
    const free = await s.account('free')
    const { noteId } = await appendNote(s, free.accountId, { language: 'en', lines: LINES })
    const c = await s.connect(endpoint, free.headers)
    t.match(toolErrorBody(await c.callTool({ name: 'generate_ai_notes', arguments: { noteId, templates: ['generic', 'sales', 'legal'] } })), { error: 'upgrade_required', balance: 200, required: 300 })
    t.equal(await balance(s, free.accountId), 200)
    const one = structured(await c.callTool({ name: 'generate_ai_notes', arguments: { noteId, template: 'generic' } }))
    t.same(one.report.ok, ['generic'], 'MCP works on the free plan')
    t.equal(await balance(s, free.accountId), 100)
  })

  t.test('get_outline only reads; generate_outline spends 50 like GET outline?generate=1, once, and refunds a failure', async (t) => {
    const w = await twins()
    const asked = llm.requests.length
    const empty = structured(await w.mcp.callTool({ name: 'get_outline', arguments: { noteId: w.mcpNote } }))
    t.same(empty, { noteId: w.mcpNote, outline: [], attemptedAt: null, generated: false })
    t.same(comparable(empty), comparable((await w.rest('GET', `/v1/notes/${w.restNote}/outline`)).json()))
    t.equal(llm.requests.length, asked, 'reading never asks the engine')
    t.equal(await balance(s, w.viaMcp.accountId), 5000, 'reading is free')

    // A failing attempt is refunded and shows as attemptedAt with generated: false.
    respond = down
    const restFailed = (await w.rest('GET', `/v1/notes/${w.restNote}/outline?generate=1`)).json()
    const mcpFailed = structured(await w.mcp.callTool({ name: 'generate_outline', arguments: { noteId: w.mcpNote } }))
    t.match(mcpFailed, { generated: false, outline: [], attemptedAt: String })
    t.same(comparable(mcpFailed), comparable(restFailed))

    respond = model()
    const restMade = (await w.rest('GET', `/v1/notes/${w.restNote}/outline?generate=1`)).json()
    const made = structured(await w.mcp.callTool({ name: 'generate_outline', arguments: { noteId: w.mcpNote } }))
    t.match(made, { generated: true, outline: [{ startMs: 0, headline: 'Welcome' }, { startMs: 9000, headline: 'The launch' }, { startMs: 27000, headline: 'Open questions' }] })
    t.same(comparable(made), comparable(restMade))
    // Asking again returns it as it is, for nothing.
    t.same(structured(await w.mcp.callTool({ name: 'generate_outline', arguments: { noteId: w.mcpNote } })), made)
    t.same(structured(await w.mcp.callTool({ name: 'get_outline', arguments: { noteId: w.mcpNote } })), made)

    const restLedger = await ledgerShape(s, w.viaRest.accountId)
    t.same(await ledgerShape(s, w.viaMcp.accountId), restLedger)
    t.same(restLedger.slice(1), [
      { type: 'CreditsCharged', operation: TOOL_COSTS.generate_outline.price!.operation, delta: -50, balanceAfter: 4950 },
      { type: 'CreditsRefunded', operation: 'outline', delta: 50, balanceAfter: 5000 },
      { type: 'CreditsCharged', operation: 'outline', delta: -50, balanceAfter: 4950 },
    ])
  })

  t.test('get_outline and generate_outline need a ready note', async (t) => {
    const a = await s.account('pro')
    const { noteId } = await appendNote(s, a.accountId, { processing: true })
    const c = await s.connect(endpoint, a.headers)
    t.match(toolErrorBody(await c.callTool({ name: 'get_outline', arguments: { noteId } })), { error: 'note_not_ready' })
    t.match(toolErrorBody(await c.callTool({ name: 'generate_outline', arguments: { noteId } })), { error: 'note_not_ready' })
    t.equal(await balance(s, a.accountId), 5000)
  })

  t.test('list_highlights and list_markers answer what their REST twins answer', async (t) => {
    const a = await s.account('pro')
    const { noteId } = await appendNote(s, a.accountId, { title: 'Launch sync', language: 'en', lines: LINES })
    const c = await s.connect(endpoint, a.headers)
    t.same(structured(await c.callTool({ name: 'list_highlights', arguments: { noteId } })), { noteId, highlights: [] }, 'nothing before analyses and an outline')
    t.same(structured(await c.callTool({ name: 'list_markers', arguments: { noteId } })), { noteId, markers: [] })
    respond = model()
    structured(await c.callTool({ name: 'generate_ai_notes', arguments: { noteId, template: 'meeting_minutes' } }))
    structured(await c.callTool({ name: 'generate_outline', arguments: { noteId } }))
    const highlights = structured(await c.callTool({ name: 'list_highlights', arguments: { noteId } }))
    t.same(highlights, (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/highlights`, headers: a.headers })).json())
    t.same(
      highlights.highlights.map((h: { kind: string; time: string; text: string }) => [h.kind, h.time, h.text]),
      [
        ['chapter', '00:00', 'Welcome'],
        ['chapter', '00:09', 'The launch'],
        ['key_point', '00:09', 'Launch moves to April'],
        ['action_item', '00:09', 'Send the new plan'],
        ['decision', '00:09', 'Launch in April'],
        ['chapter', '00:27', 'Open questions'],
        ['question', '00:27', 'Hire a second designer?'],
      ],
    )
    t.match(highlights.highlights[3], { template: 'meeting_minutes', assignee: 'Ana', deadline: 'Friday' })
    const onlyOther = structured(await c.callTool({ name: 'list_highlights', arguments: { noteId, template: 'sales' } }))
    t.same(onlyOther.highlights.map((h: { kind: string }) => h.kind), ['chapter', 'chapter', 'chapter'], 'another template: the chapters only')
    const markers = structured(await c.callTool({ name: 'list_markers', arguments: { noteId } }))
    t.same(markers, (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/markers`, headers: a.headers })).json())
    t.same(markers.markers.map((m: { time: string; title: string }) => `${m.time} ${m.title}`), ['00:00 Welcome', '00:09 The launch', '00:27 Open questions'])
    const stranger = await s.connect(endpoint, (await s.account('pro')).headers)
    t.match(toolErrorBody(await stranger.callTool({ name: 'list_highlights', arguments: { noteId } })), { error: 'not_found' })
    t.match(toolErrorBody(await stranger.callTool({ name: 'list_markers', arguments: { noteId } })), { error: 'not_found' })
  })

  t.test('ask_note: 10 like POST /v1/notes/{id}/ask, refunded on chat_failed; the same ledger entries', async (t) => {
    const w = await twins()
    respond = model()
    const r = await w.rest('POST', `/v1/notes/${w.restNote}/ask`, { question: 'When do we launch?' })
    t.equal(r.statusCode, 200)
    const m = structured(await w.mcp.callTool({ name: 'ask_note', arguments: { noteId: w.mcpNote, question: 'When do we launch?' } }))
    t.match(m, { noteId: w.mcpNote, question: 'When do we launch?', answer: 'The launch is in April [00:00].', sessionId: String })
    t.equal(m.citedSegments.length, 1)
    t.notOk('citedNotes' in m, 'a note’s answer is the Answer of POST /v1/notes/{id}/ask')
    t.same(comparable(m), comparable(r.json()))
    t.same(Object.keys(m).sort(), Object.keys(r.json()).sort())
    // A follow-up in the same session.
    const follow = structured(await w.mcp.callTool({ name: 'ask_note', arguments: { noteId: w.mcpNote, question: 'And the budget?', sessionId: m.sessionId } }))
    t.equal(follow.sessionId, m.sessionId)
    t.match(lastUser(llm.requests.at(-1)!), /And the budget\?/)
    t.match(llm.requests.at(-1)!.json().messages.slice(1, 3), [{ role: 'user', content: 'When do we launch?' }, { role: 'assistant', content: m.answer }])
    await w.rest('POST', `/v1/notes/${w.restNote}/ask`, { question: 'And the budget?', sessionId: r.json().sessionId })

    respond = down
    t.equal((await w.rest('POST', `/v1/notes/${w.restNote}/ask`, { question: 'Who sends the plan?' })).statusCode, 502)
    t.match(toolErrorBody(await w.mcp.callTool({ name: 'ask_note', arguments: { noteId: w.mcpNote, question: 'Who sends the plan?' } })), { error: 'chat_failed' })

    const restLedger = await ledgerShape(s, w.viaRest.accountId)
    t.same(await ledgerShape(s, w.viaMcp.accountId), restLedger)
    t.same(restLedger.slice(1), [
      { type: 'CreditsCharged', operation: TOOL_COSTS.ask_note.price!.operation, delta: -10, balanceAfter: 4990 },
      { type: 'CreditsCharged', operation: 'ask', delta: -10, balanceAfter: 4980 },
      { type: 'CreditsCharged', operation: 'ask', delta: -10, balanceAfter: 4970 },
      { type: 'CreditsRefunded', operation: 'ask', delta: 10, balanceAfter: 4980 },
    ])
  })

  t.test('ask_note without a noteId asks the whole library, like POST /v1/ask, and never another account’s notes', async (t) => {
    const w = await twins()
    const other = await s.account('pro')
    const secret = (await appendNote(s, other.accountId, { title: 'Secret', language: 'en', lines: [['A', 'We launch the zeppelin in April.']] })).segments[0]!.id
    respond = model()
    const r = await w.rest('POST', '/v1/ask', { question: 'When do we launch?' })
    t.equal(r.statusCode, 200)
    const m = structured(await w.mcp.callTool({ name: 'ask_note', arguments: { question: 'When do we launch?' } }))
    t.match(m, { question: 'When do we launch?', answer: 'The launch is in April [Launch sync | 00:00].', citedNotes: [{ noteId: w.mcpNote, title: 'Launch sync' }] })
    t.notOk('noteId' in m, 'a library answer is the GlobalAnswer of POST /v1/ask')
    t.same(Object.keys(m).sort(), Object.keys(r.json()).sort())
    t.notOk(lastUser(llm.requests.at(-1)!).includes(secret), 'another account’s segments are never passages')
    t.same(await ledgerShape(s, w.viaMcp.accountId), await ledgerShape(s, w.viaRest.accountId))
    t.match((await ledgerShape(s, w.viaMcp.accountId)).at(-1), { type: 'CreditsCharged', operation: 'ask', delta: -10 })
    t.match(toolErrorBody(await w.mcp.callTool({ name: 'ask_note', arguments: { question: 'Again?', sessionId: r.json().sessionId } })), { error: 'not_found' }, 'another account’s session')
    t.equal((await w.mcp.callTool({ name: 'ask_note', arguments: { question: '' } })).isError, true)
  })
})
