// The public demo endpoint {mcp_url}/demo (spec parts 1 and 8): no key, read-only tools, a
// seeded sample library that is never the caller's, 10 requests per 10 minutes per IP, then 429.
import t from 'tap'
import { mcpTestService, structured, toolErrorBody } from './support/mcp.ts'
import { seedDemoDataset } from '../app/demoDataset.ts'
import { DEMO_ACCOUNT_ID, DEMO_FOLDERS, DEMO_NOTES, demoAnalysisDraft, demoChapters, demoDurationMs } from '../domain/demo/dataset.ts'
import { outlineProblems } from '../domain/analysis/analysis.ts'
import { AnalysisContent } from '../contract/analysis.ts'
import { TOOLS } from '../mcp/tools/index.ts'
import { appendNote } from './support/notes.ts'

t.test('the sample analyses and outlines hold the contract', async (t) => {
  for (const n of DEMO_NOTES) {
    const starts = new Set(n.lines.map(([, startMs]) => startMs))
    for (const a of n.analyses) {
      const checked = AnalysisContent.safeParse(demoAnalysisDraft(a))
      t.ok(checked.success, `${n.key} ${a.template}: ${checked.error?.issues[0]?.message ?? 'valid'}`)
      const anchors = [...a.keyPoints, ...a.actionItems, ...a.decisions, ...a.questions].map(([, ms]) => ms)
      t.ok(anchors.every((ms) => starts.has(ms)), `${n.key} ${a.template}: every anchor is the start of a segment`)
    }
    t.same(outlineProblems(demoChapters(n), demoDurationMs(n)), [], `${n.key}: the outline covers the audio`)
    t.ok(n.chapters.every(([ms]) => starts.has(ms)), `${n.key}: every chapter starts a segment`)
    const labels = new Set(n.lines.map(([label]) => label))
    t.ok(Object.keys(n.speakerNames).every((l) => labels.has(l)), `${n.key}: named speakers speak`)
  }
})

const json = { 'content-type': 'application/json' }

t.test('the demo serves the sample library only, whoever calls', async (t) => {
  // Each part speaks from an address of its own (X-Forwarded-For, trusted here), so the demo's
  // 10 requests per address are not what this suite measures.
  const s = await mcpTestService({ env: { MCP_TRUST_PROXY: 'true' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  let ip = 10
  const demoClient = () => s.connect(`${s.mcpUrl}/demo`, { ...a.headers, 'x-forwarded-for': `198.18.0.${ip++}` })
  const mine = (await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify({ audioUrl: 'https://media.example.org/q.mp3', title: 'Quarterly zeppelin budget' }) })).json().noteId
  await s.services.folders.create({ accountId: a.accountId, plan: 'pro', keyId: null, requestId: 'seed', via: 'admin' }, 'My private folder')

  // The caller even sends their own API key: the demo must not act for them.

  t.test('read-only tools only', async (t) => {
    const demo = await demoClient()
    const { tools } = await demo.listTools()
    t.same(
      tools.map((x) => x.name),
      TOOLS.filter((x) => x.readOnly).map((x) => x.name),
    )
    t.notOk(tools.some((x) => x.name === 'import_from_url'))
    for (const tool of tools) t.equal(tool.annotations?.readOnlyHint, true)
    const refused = await demo.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://media.example.org/x.mp3' } })
    t.equal(refused.isError, true)
    t.match(toolErrorBody(refused), { error: 'not_found', message: /No tool named import_from_url/ }, 'the README’s JSON error body (issue 17, item 5)')
    t.equal((await s.services.credits.state(a.accountId)).state.balance, 4950, 'the caller’s credits are untouched (only their own REST import above)')
  })

  t.test('lists, searches and reads the sample notes and folders', async (t) => {
    const demo = await demoClient()
    const list = structured(await demo.callTool({ name: 'list_recent_notes', arguments: { limit: 100 } }))
    t.same(list.notes.map((n: { id: string }) => n.id).sort(), DEMO_NOTES.map((n) => n.noteId).sort())
    t.ok(list.notes.every((n: { status: string }) => n.status === 'ready'))
    const found = structured(await demo.callTool({ name: 'search_notes', arguments: { q: 'espresso' } }))
    t.same(
      found.notes.map((n: { title: string }) => n.title),
      ['The Coffee Hour, episode 12: where espresso came from'],
    )
    const detail = structured(await demo.callTool({ name: 'get_note', arguments: { noteId: found.notes[0].id } }))
    t.match(detail, { transcript: { fullText: /Angelo Moriondo/, speakerCount: 2 }, tags: ['podcast', 'history'] })
    const folders = structured(await demo.callTool({ name: 'list_folders', arguments: {} }))
    t.same(folders.folders.map((f: { id: string }) => f.id).sort(), DEMO_FOLDERS.map((f) => f.folderId).sort())
    t.match(folders.folders.find((f: { name: string }) => f.name === 'Meetings'), { noteCount: 2 })
    const waited = structured(await demo.callTool({ name: 'wait_for_transcription', arguments: { noteId: DEMO_NOTES[0]!.noteId, timeoutSeconds: 5 } }))
    t.match(waited, { status: 'ready', finished: true })
    const status = structured(await demo.callTool({ name: 'founder_status', arguments: {} }))
    t.equal(status.accountId, DEMO_ACCOUNT_ID)
    t.equal(status.usage.notes.total, DEMO_NOTES.length)
  })

  t.test('highlights, outline, markers and named speakers of the sample library', async (t) => {
    const sync = DEMO_NOTES.find((n) => n.key === 'product-sync')!
    const demo = await demoClient()
    const highlights = structured(await demo.callTool({ name: 'list_highlights', arguments: { noteId: sync.noteId } }))
    t.match(
      highlights.highlights.find((h: { kind: string }) => h.kind === 'decision'),
      { text: /Launch the onboarding revamp on 23 March/, startMs: 30300, time: '00:30', template: 'meeting_minutes' },
    )
    t.match(highlights.highlights.filter((h: { kind: string }) => h.kind === 'action_item'), [{ assignee: 'Daniel', deadline: 'before the launch on 23 March' }, { deadline: 'Friday' }, { deadline: 'next week' }])
    t.equal(highlights.highlights.filter((h: { kind: string }) => h.kind === 'chapter').length, 4)
    const outline = structured(await demo.callTool({ name: 'get_outline', arguments: { noteId: sync.noteId } }))
    t.match(outline, { generated: true, outline: [{ startMs: 0, endMs: 15000, headline: 'Results of the new onboarding flow' }] })
    t.equal(outline.outline.at(-1).endMs, 58000)
    const markers = structured(await demo.callTool({ name: 'list_markers', arguments: { noteId: sync.noteId } }))
    t.same(markers.markers.map((m: { time: string }) => m.time), ['00:00', '00:15', '00:30', '00:44'])
    const timeline = structured(await demo.callTool({ name: 'get_speaker_timeline', arguments: { noteId: sync.noteId } }))
    t.same(timeline.speakers.map((x: { name: string }) => x.name), ['Maya', 'Daniel'])
    t.same(timeline.turns.slice(0, 2).map((x: { speakerName: string }) => x.speakerName), ['Maya', 'Daniel'])
    const segments = structured(await demo.callTool({ name: 'get_transcript_segments', arguments: { noteId: sync.noteId } }))
    t.match(segments, { segments: [{ speakerName: 'Maya', text: /Good morning/ }, { speakerName: 'Daniel' }] })
    t.notOk('truncated' in segments, 'the sample is shown whole')
    const profiles = structured(await demo.callTool({ name: 'list_voice_profiles', arguments: {} }))
    t.match(profiles, { consent: { status: 'never' }, profiles: [] })

    const more = await demoClient()
    const interview = DEMO_NOTES.find((n) => n.key === 'customer-interview')!
    t.same(
      structured(await more.callTool({ name: 'get_speaker_timeline', arguments: { noteId: interview.noteId } })).speakers.map((x: { name: string | null }) => x.name),
      [null, 'Sofia'],
      'the interviewer stays unnamed',
    )
    const detail = structured(await more.callTool({ name: 'get_note', arguments: { noteId: DEMO_NOTES.find((n) => n.key === 'history-class')!.noteId } }))
    t.match(detail, { aiNotes: [{ template: 'university_class', model: 'sample', summary: /Gutenberg/ }], outline: [{ headline: 'La imprenta de Gutenberg' }] })
    const translation = structured(await more.callTool({ name: 'get_transcript_translation', arguments: { noteId: interview.noteId, language: 'es' } }))
    t.match(translation, { status: 'none', progress: { totalSegments: 6 } })
  })

  t.test('the spending and writing tools are not offered', async (t) => {
    const demo = await demoClient()
    const names = (await demo.listTools()).tools.map((x) => x.name)
    for (const n of ['generate_ai_notes', 'generate_outline', 'ask_note', 'replace_in_transcript', 'suggest_speaker_names', 'rename_speaker', 'import_from_url']) t.notOk(names.includes(n), n)
    for (const n of ['get_transcript_segments', 'get_transcript_translation', 'list_highlights', 'get_outline', 'list_markers', 'get_speaker_timeline', 'list_voice_profiles']) t.ok(names.includes(n), n)
    const sync = DEMO_NOTES[0]!.noteId
    t.equal((await demo.callTool({ name: 'rename_speaker', arguments: { noteId: sync, label: 'A', name: 'Mallory' } })).isError, true)
    t.equal((await demo.callTool({ name: 'generate_outline', arguments: { noteId: sync } })).isError, true)
    const timeline = structured(await demo.callTool({ name: 'get_speaker_timeline', arguments: { noteId: sync } }))
    t.equal(timeline.speakers[0].name, 'Maya', 'nothing changed')
  })

  t.test('never returns the caller’s data', async (t) => {
    const demo = await demoClient()
    t.same(structured(await demo.callTool({ name: 'search_notes', arguments: { q: 'zeppelin' } })).notes, [])
    t.match(toolErrorBody(await demo.callTool({ name: 'get_note', arguments: { noteId: mine } })), { error: 'not_found' })
    t.match(toolErrorBody(await demo.callTool({ name: 'wait_for_transcription', arguments: { noteId: mine, timeoutSeconds: 1 } })), { error: 'not_found' })
    const names = structured(await demo.callTool({ name: 'list_folders', arguments: {} })).folders.map((f: { name: string }) => f.name)
    t.notOk(names.includes('My private folder'))
    t.not(structured(await demo.callTool({ name: 'founder_status', arguments: {} })).accountId, a.accountId)
    // And the other way round: the caller's own endpoint never shows the sample library.
    const own = await s.connect(s.mcpUrl, a.headers)
    t.same(
      structured(await own.callTool({ name: 'list_recent_notes', arguments: {} })).notes.map((n: { id: string }) => n.id),
      [mine],
    )
    // The caller's own ready note with an outline and named speakers: invisible from the demo.
    const privateNote = await appendNote(s, a.accountId, { title: 'Zeppelin sync', language: 'en', lines: [['A', 'The zeppelin budget is final.'], ['B', 'Agreed.']] })
    await s.services.transcripts.renameSpeaker({ accountId: a.accountId, plan: 'pro', keyId: null, requestId: 'test', via: 'admin' }, privateNote.noteId, 'A', 'Private Person')
    await s.services.analysis.outline({ accountId: a.accountId, plan: 'pro', keyId: null, requestId: 'test', via: 'admin' }, privateNote.noteId, true)
    const again = await demoClient()
    t.match(toolErrorBody(await again.callTool({ name: 'list_highlights', arguments: { noteId: privateNote.noteId } })), { error: 'not_found' })
    t.match(toolErrorBody(await again.callTool({ name: 'get_outline', arguments: { noteId: privateNote.noteId } })), { error: 'not_found' })
    t.match(toolErrorBody(await again.callTool({ name: 'list_markers', arguments: { noteId: privateNote.noteId } })), { error: 'not_found' })
    t.match(toolErrorBody(await again.callTool({ name: 'get_speaker_timeline', arguments: { noteId: privateNote.noteId } })), { error: 'no_transcript' })
    t.match(toolErrorBody(await again.callTool({ name: 'get_transcript_segments', arguments: { noteId: privateNote.noteId } })), { error: 'no_transcript' })
    const profiles = structured(await again.callTool({ name: 'list_voice_profiles', arguments: {} }))
    t.same(profiles.profiles, [])
  })

  t.test('seeding again changes nothing', async (t) => {
    const demo = await demoClient()
    const before = (await s.services.events.readAll()).length
    await seedDemoDataset(s.services)
    await seedDemoDataset(s.services)
    t.equal((await s.services.events.readAll()).length, before)
    t.equal(structured(await demo.callTool({ name: 'list_recent_notes', arguments: { limit: 100 } })).notes.length, DEMO_NOTES.length)
  })
})

t.test('10 requests per 10 minutes per IP address, then 429', async (t) => {
  // Behind a proxy the client address comes from X-Forwarded-For (MCP_TRUST_PROXY), which lets the
  // test speak from two addresses.
  const s = await mcpTestService({ env: { MCP_TRUST_PROXY: 'true' } })
  t.teardown(s.close)
  const demoUrl = `${s.mcpUrl}/demo`
  const call = (ip: string, id: number) =>
    fetch(demoUrl, {
      method: 'POST',
      headers: { ...json, accept: 'application/json, text/event-stream', 'x-forwarded-for': ip },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_recent_notes', arguments: { limit: 1 } } }),
    })

  for (let i = 1; i <= 10; i++) {
    const r = await call('203.0.113.7', i)
    t.equal(r.status, 200, `request ${i}`)
    t.match(await r.text(), /Weekly product sync|Coffee Hour|Lumen|imprenta/)
  }
  const limited = await call('203.0.113.7', 11)
  t.equal(limited.status, 429)
  const body = await limited.json()
  t.match(body, { error: 'rate_limit_exceeded', message: /10 requests per 10 minutes/ })
  t.ok(body.retryAfter > 500 && body.retryAfter <= 600, `retryAfter ${body.retryAfter}`)
  t.equal(limited.headers.get('retry-after'), String(body.retryAfter))
  t.equal((await call('203.0.113.7', 12)).status, 429, 'still limited')
  t.equal((await call('198.51.100.4', 1)).status, 200, 'another address has its own budget')

  t.test('an SDK client from a limited address sees the 429', async (t) => {
    const headers = { 'x-forwarded-for': '192.0.2.44' }
    const c = await s.connect(demoUrl, headers) // initialize + notifications/initialized: 2 requests
    for (let i = 0; i < 8; i++) structured(await c.callTool({ name: 'list_folders', arguments: {} }))
    await t.rejects(c.callTool({ name: 'list_folders', arguments: {} }), /429|rate_limit_exceeded/)
  })

  t.test('a JSON-RPC batch is refused, so the limit counts every tool call (issue 11, item 5)', async (t) => {
    const batch = (ip: string, n: number) =>
      fetch(demoUrl, {
        method: 'POST',
        headers: { ...json, accept: 'application/json, text/event-stream', 'x-forwarded-for': ip },
        body: JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'list_folders', arguments: {} } }))),
      })
    for (const n of [100, 2]) {
      const r = await batch('192.0.2.77', n)
      t.equal(r.status, 400, `a batch of ${n} is not run`)
      const body = await r.text()
      t.match(JSON.parse(body), { error: 'invalid_request', message: /one JSON-RPC message per request/ })
      t.notMatch(body, /Weekly product sync|folders/, 'and nothing of the library came back')
    }
    // Ten requests from that address in all: the refused batches counted as the requests they are.
    for (let i = 0; i < 8; i++) t.equal((await call('192.0.2.77', 100 + i)).status, 200, `single ${i + 1}`)
    t.equal((await call('192.0.2.77', 200)).status, 429, 'the eleventh request of the window')
  })

  t.test('the limit is the demo’s alone: keyed endpoints are not counted against it', async (t) => {
    const a = await s.account('free')
    const c = await s.connect(s.mcpUrl, { ...a.headers, 'x-forwarded-for': '203.0.113.7' })
    t.ok(structured(await c.callTool({ name: 'list_folders', arguments: {} })))
  })
})
