// The public demo endpoint {mcp_url}/demo (spec parts 1 and 8): no key, read-only tools, a
// seeded sample library that is never the caller's, 10 requests per 10 minutes per IP, then 429.
import t from 'tap'
import { mcpTestService, structured, toolErrorBody } from './support/mcp.ts'
import { seedDemoDataset } from '../commands/demoDataset.ts'
import { DEMO_ACCOUNT_ID, DEMO_FOLDERS, DEMO_NOTES } from '../domain/demo/dataset.ts'
import { TOOLS } from '../mcp/tools/index.ts'

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
    t.match((refused.content as { text: string }[])[0]!.text, /not found/)
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

  t.test('the limit is the demo’s alone: keyed endpoints are not counted against it', async (t) => {
    const a = await s.account('free')
    const c = await s.connect(s.mcpUrl, { ...a.headers, 'x-forwarded-for': '203.0.113.7' })
    t.ok(structured(await c.callTool({ name: 'list_folders', arguments: {} })))
  })
})
