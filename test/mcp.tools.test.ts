// The MCP tools (spec parts 1, 4 and 8), driven through the SDK's own client over streamable HTTP,
// at both addresses of the server: POST {base_url}/mcp/stream and {mcp_url}.
import t from 'tap'
import { OAuthProtectedResourceMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js'
import { mcpTestService, markTranscribed, structured, toolErrorBody } from './support/mcp.ts'
import { pollUntil } from './support/pollUntil.ts'
import { TOOLS } from '../mcp/tools/index.ts'
import { COST_CLASSES, TOOL_COSTS, TOOL_NAMES, costLine } from '../domain/mcp/tools.ts'
import { McpInfo } from '../contract/mcp.ts'
import { ledgerEntries } from '../readmodels/ledger.ts'
import { IMPORT_RESERVE_CREDITS } from '../commands/notes.ts'

const json = { 'content-type': 'application/json' }

t.test('the cost-class table is the spec’s, and every registered tool is one of its 21 names', async (t) => {
  t.equal(TOOL_NAMES.length, 21)
  t.same(Object.keys(TOOL_COSTS).sort(), [...TOOL_NAMES].sort())
  const spending = TOOL_NAMES.filter((n) => TOOL_COSTS[n].costClass === 'spends_credits')
  t.same(spending.sort(), ['ask_note', 'extract_clip', 'generate_ai_notes', 'generate_outline', 'import_from_url'])
  t.same(TOOL_NAMES.filter((n) => TOOL_COSTS[n].costClass === 'free_truncated_on_free_plan').sort(), ['get_transcript_segments', 'get_transcript_translation'])
  for (const n of spending) t.ok(TOOL_COSTS[n].price && TOOL_COSTS[n].price!.credits > 0, `${n} has a price`)
  t.equal(TOOL_COSTS.extract_clip.price?.credits, 5)
  t.equal(TOOL_COSTS.import_from_url.price?.credits, IMPORT_RESERVE_CREDITS, 'the hold the import command takes is the price the table publishes')
  const names = TOOLS.map((x) => x.name)
  t.equal(new Set(names).size, names.length, 'no tool registered twice')
  t.same(
    names,
    TOOL_NAMES.filter((n) => names.includes(n)),
    'registered in the spec’s order',
  )
})

t.test('MCP tools over streamable HTTP', async (t) => {
  const s = await mcpTestService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const b = await s.account('pro')
  const endpoints = { stream: `${s.base}/mcp/stream`, mcp: s.mcpUrl }

  // Given: a folder, a transcribed note in it, and an imported note still processing.
  const folderId = await s.services.folders.create({ accountId: a.accountId, plan: 'pro', keyId: null, requestId: 'seed', via: 'admin' }, 'Interviews')
  const rest = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, who = a) =>
    s.inject({ method, url, headers: { ...who.headers, ...(body ? json : {}) }, ...(body ? { payload: JSON.stringify(body) } : {}) })
  const first = (await rest('POST', '/v1/notes', { audioUrl: 'https://podcasts.example.org/espresso/feed.rss', title: 'Espresso history' })).json().noteId as string
  await markTranscribed(s, first, [
    ['A', 'Espresso starts in Turin in 1884 with a steam machine.'],
    ['B', 'The lever machines came after the war.'],
  ])
  await rest('PATCH', `/v1/notes/${first}`, { folderId, tags: ['coffee', 'history'] })
  const second = (await rest('POST', '/v1/notes', { audioUrl: 'https://media.example.org/standup.mp3', title: 'Standup' })).json().noteId as string
  // And someone else's note with a word of its own.
  const foreign = (await rest('POST', '/v1/notes', { audioUrl: 'https://media.example.org/secret.mp3', title: 'Zanzibar secret plans' }, b)).json().noteId as string

  for (const [where, url] of Object.entries(endpoints)) {
    t.test(`at ${where}`, async (t) => {
      const c = await s.connect(url, a.headers)

      t.test('tools/list: the registered tools with their contract schemas and their cost from the table', async (t) => {
        const { tools } = await c.listTools()
        t.same(
          tools.map((x) => x.name),
          TOOLS.map((x) => x.name),
        )
        for (const tool of tools) {
          t.ok(tool.description?.endsWith(costLine(tool.name as (typeof TOOL_NAMES)[number])), `${tool.name} states its cost`)
          t.equal(tool.inputSchema.type, 'object')
          t.equal(tool.outputSchema?.type, 'object', `${tool.name} declares a structured result`)
          t.equal(tool._meta?.costClass, TOOL_COSTS[tool.name as (typeof TOOL_NAMES)[number]].costClass)
        }
        const imp = tools.find((x) => x.name === 'import_from_url')!
        t.match(imp.description, /Cost: spends credits \(50 per started minute of audio/)
        t.equal(imp.annotations?.readOnlyHint, false)
        t.same(imp.inputSchema.required, ['audioUrl'])
        t.equal(tools.find((x) => x.name === 'get_note')!.annotations?.readOnlyHint, true)
      })

      t.test('list_recent_notes answers exactly what GET /v1/notes answers, newest first, paged', async (t) => {
        const page = structured(await c.callTool({ name: 'list_recent_notes', arguments: { limit: 1 } }))
        t.same(page, (await rest('GET', '/v1/notes?limit=1')).json(), 'same body as the REST route')
        t.equal(page.notes[0].id, second)
        t.equal(page.hasMore, true)
        const next = structured(await c.callTool({ name: 'list_recent_notes', arguments: { limit: 1, cursor: page.nextCursor } }))
        t.same(
          next.notes.map((n: { id: string }) => n.id),
          [first],
        )
        t.equal(next.hasMore, false)
        const filtered = structured(await c.callTool({ name: 'list_recent_notes', arguments: { folderId, tags: ['coffee'], status: 'ready', origin: ['podcast'] } }))
        t.same(
          filtered.notes.map((n: { id: string }) => n.id),
          [first],
        )
        t.same(structured(await c.callTool({ name: 'list_recent_notes', arguments: { folderId: 'null' } })).notes.map((n: { id: string }) => n.id), [second])
      })

      t.test('search_notes searches title, description and transcript; never another account’s notes', async (t) => {
        const hits = structured(await c.callTool({ name: 'search_notes', arguments: { q: 'lever Turin' } }))
        t.same(
          hits.notes.map((n: { id: string }) => n.id),
          [first],
        )
        t.same(hits, (await rest('GET', '/v1/notes?q=lever%20Turin')).json())
        t.same(structured(await c.callTool({ name: 'search_notes', arguments: { q: 'standup' } })).notes.map((n: { id: string }) => n.id), [second])
        t.same(structured(await c.callTool({ name: 'search_notes', arguments: { q: 'Zanzibar' } })).notes, [])
        const empty = await c.callTool({ name: 'search_notes', arguments: { q: '' } })
        t.equal(empty.isError, true, 'q is required')
      })

      t.test('get_note answers exactly what GET /v1/notes/{id} answers; someone else’s note is not_found', async (t) => {
        const note = structured(await c.callTool({ name: 'get_note', arguments: { noteId: first } }))
        t.same(note, (await rest('GET', `/v1/notes/${first}`)).json())
        t.match(note, { id: first, status: 'ready', folderId, tags: ['coffee', 'history'], transcript: { fullText: /Turin in 1884/, speakerCount: 2 } })
        t.match(toolErrorBody(await c.callTool({ name: 'get_note', arguments: { noteId: foreign } })), { error: 'not_found' })
        t.equal((await c.callTool({ name: 'get_note', arguments: { noteId: 'not-a-uuid' } })).isError, true)
      })

      t.test('list_folders answers what GET /v1/folders answers', async (t) => {
        const folders = structured(await c.callTool({ name: 'list_folders', arguments: {} }))
        t.same(folders, (await rest('GET', '/v1/folders')).json())
        t.match(folders.folders, [{ id: folderId, name: 'Interviews', noteCount: 1 }])
      })

      t.test('wait_for_transcription on a ready note returns at once', async (t) => {
        const r = structured(await c.callTool({ name: 'wait_for_transcription', arguments: { noteId: first } }))
        t.match(r, { noteId: first, status: 'ready', finished: true, errorCode: null, note: { id: first }, next: /get_note/ })
        t.ok(r.waitedMs < 1000)
      })
    })
  }

  t.test('wait_for_transcription waits for the pipeline, with progress notifications, then returns the status', async (t) => {
    const c = await s.connect(endpoints.mcp, a.headers)
    const progress: { progress: number; total?: number; message?: string }[] = []
    const waiting = c.callTool({ name: 'wait_for_transcription', arguments: { noteId: second, timeoutSeconds: 20 } }, undefined, { onprogress: (p) => void progress.push(p) })
    // The pipeline finishes the note while the tool waits (it has said so: its first notification).
    await pollUntil('the tool waits', () => progress.length > 0, 15_000, 20)
    const markedAfter = Date.now()
    await markTranscribed(s, second, [['A', 'Yesterday I shipped the importer.']])
    const r = structured(await waiting)
    t.match(r, { noteId: second, status: 'ready', finished: true, progress: null })
    t.ok(r.waitedMs > 0 && r.waitedMs < 15000, `waited ${r.waitedMs} ms (the note was finished ${Date.now() - markedAfter} ms before the answer came)`)
    t.ok(progress.length >= 2, `${progress.length} progress notifications`)
    t.match(progress[0], { total: 20, message: /processing: queued/ })
    t.match(progress[progress.length - 1], { message: 'ready' })
    for (let i = 1; i < progress.length; i++) t.ok(progress[i]!.progress > progress[i - 1]!.progress, 'progress grows')
  })

  t.test('wait_for_transcription gives up at its bound and says so', async (t) => {
    const c = await s.connect(endpoints.stream, a.headers)
    const pending = structured(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://media.example.org/long.mp3' } }))
    const started = Date.now()
    const progress: unknown[] = []
    const r = structured(await c.callTool({ name: 'wait_for_transcription', arguments: { noteId: pending.noteId, timeoutSeconds: 1 } }, undefined, { onprogress: (p) => void progress.push(p) }))
    t.match(r, { status: 'processing', finished: false, progress: { stage: 'queued' }, next: /again/ })
    t.ok(Date.now() - started >= 900 && Date.now() - started < 5000)
    t.ok(progress.length >= 1)
    t.match(toolErrorBody(await c.callTool({ name: 'wait_for_transcription', arguments: { noteId: foreign, timeoutSeconds: 1 } })), { error: 'not_found' })
    t.equal((await c.callTool({ name: 'wait_for_transcription', arguments: { noteId: pending.noteId, timeoutSeconds: 121 } })).isError, true, 'the bound is enforced')
  })

  t.test('import_from_url takes the same ledger entries as POST /v1/notes', async (t) => {
    const viaRest = await s.account('pro')
    const viaMcp = await s.account('pro')
    const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...viaRest.headers, ...json }, payload: JSON.stringify({ audioUrl: 'https://media.example.org/same.mp3', title: 'Same' }) })
    t.equal(r.statusCode, 202)
    const c = await s.connect(endpoints.mcp, viaMcp.headers)
    const m = structured(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://media.example.org/same.mp3', title: 'Same' } }))
    t.match(m, { status: 'processing', provider: 'direct', next: /wait_for_transcription/ })
    const shape = async (accountId: string, noteId: string) => {
      const { revision } = await s.services.credits.state(accountId)
      for (let i = 0; i < 100; i++) {
        const entries = await ledgerEntries(s.docs, accountId)
        if (entries.length > 0 && entries[entries.length - 1]!.revision >= revision) {
          return entries.map((e) => ({ type: e.type, operation: e.operation, delta: e.delta, balanceAfter: e.balanceAfter, noteIsTheImport: e.noteId === null ? null : e.noteId === noteId }))
        }
        await new Promise((r) => setTimeout(r, 20))
      }
      throw new Error('ledger read model did not catch up')
    }
    const restLedger = await shape(viaRest.accountId, r.json().noteId)
    const mcpLedger = await shape(viaMcp.accountId, m.noteId)
    t.same(mcpLedger, restLedger)
    t.match(mcpLedger[mcpLedger.length - 1], { type: 'CreditsReserved', operation: TOOL_COSTS.import_from_url.price!.operation, delta: -TOOL_COSTS.import_from_url.price!.credits, balanceAfter: 4950, noteIsTheImport: true })
    // The same Idempotency-Key semantics: a repeated call returns the first note and holds once.
    const again1 = structured(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://media.example.org/k.mp3', idempotencyKey: 'k-1' } }))
    const again2 = structured(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://media.example.org/k.mp3', idempotencyKey: 'k-1' } }))
    t.equal(again2.noteId, again1.noteId)
    t.equal((await s.services.credits.state(viaMcp.accountId)).state.balance, 4900)
  })

  t.test('import_from_url refuses what POST /v1/notes refuses, with the same codes', async (t) => {
    const c = await s.connect(endpoints.stream, a.headers)
    t.match(toolErrorBody(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'http://127.0.0.1:8080/a.mp3' } })), { error: 'invalid_audio_url', message: /non-public/ })
    t.match(toolErrorBody(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC' } })), { error: 'invalid_audio_url' })
    t.equal((await c.callTool({ name: 'import_from_url', arguments: {} })).isError, true)
  })

  t.test('MCP works on every plan; the free plan spends its own 200 credits and then gets insufficient_credits', async (t) => {
    const free = await s.account('free')
    t.equal((await s.inject({ method: 'GET', url: '/v1/notes', headers: free.headers })).statusCode, 403, 'REST needs pro')
    const c = await s.connect(endpoints.mcp, free.headers)
    for (let i = 0; i < 4; i++) structured(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: `https://media.example.org/free-${i}.mp3` } }))
    const refused = toolErrorBody(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://media.example.org/free-5.mp3' } }))
    t.match(refused, { error: 'insufficient_credits', balance: 0, required: 50 })
    t.equal(structured(await c.callTool({ name: 'list_recent_notes', arguments: {} })).notes.length, 4, 'nothing created by the refused call')
  })

  t.test('founder_status: plan, credits left in the cycle, usage; the same as GET /v1/account/status', async (t) => {
    const who = await s.account('personal')
    const c = await s.connect(endpoints.stream, who.headers)
    structured(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://media.example.org/status.mp3' } }))
    const st = structured(await c.callTool({ name: 'founder_status', arguments: {} }))
    t.match(st, {
      accountId: who.accountId,
      plan: 'personal',
      restApi: { available: false, requiredPlan: 'pro' },
      credits: { monthly: 1000, left: 950, reserved: 50, spent: 0, cycle: /^\d{4}-\d{2}$/ },
      usage: { byOperation: [{ operation: 'import', count: 1, credits: 50 }], notes: { total: 1, processing: 1, ready: 0, failed: 0 }, uploadMinutes: { used: 0, quota: 600 } },
    })
    t.ok(Date.parse(st.credits.resetsAt) > Date.now())
    const pro = await s.account('pro')
    const viaMcp = structured(await (await s.connect(endpoints.mcp, pro.headers)).callTool({ name: 'founder_status', arguments: {} }))
    t.same(viaMcp, (await s.inject({ method: 'GET', url: '/v1/account/status', headers: pro.headers })).json())
  })

  t.test('without a valid credential: 401 naming the resource metadata; GET and DELETE are 405', async (t) => {
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })
    const post = (url: string, headers: Record<string, string> = {}) => fetch(url, { method: 'POST', headers: { ...json, accept: 'application/json, text/event-stream', ...headers }, body: initialize })
    for (const [url, metadata] of [
      [endpoints.stream, `${s.base}/.well-known/oauth-protected-resource/mcp/stream`],
      [endpoints.mcp, `${s.mcpUrl}/.well-known/oauth-protected-resource`],
    ] as const) {
      const none = await post(url)
      t.equal(none.status, 401)
      t.equal(none.headers.get('www-authenticate'), `Bearer resource_metadata="${metadata}"`)
      t.match(await none.json(), { error: 'invalid_api_key' })
      const bad = await post(url, { authorization: `Bearer ${a.apiKey}x` })
      t.equal(bad.status, 401)
      t.match(bad.headers.get('www-authenticate'), /resource_metadata=.*error="invalid_token"/)
      const prm = OAuthProtectedResourceMetadataSchema.parse(await (await fetch(metadata)).json())
      t.same(prm.authorization_servers, [s.base])
      t.equal((await fetch(url, { headers: a.headers })).status, 405)
      t.equal((await fetch(url, { method: 'DELETE', headers: a.headers })).status, 405)
    }
    const revoked = await s.services.accounts.createApiKey(a.accountId, 'short-lived')
    await s.services.accounts.revokeApiKey(a.accountId, revoked.keyId)
    t.equal((await post(endpoints.mcp, { authorization: `Bearer ${revoked.apiKey}` })).status, 401, 'a revoked key is refused at once')
  })

  t.test('GET /mcp/info: server, version, tools with cost classes, auth methods; the same at {mcp_url}/info', async (t) => {
    const info = await (await fetch(`${s.base}/mcp/info`)).json()
    McpInfo.parse(info)
    t.same(await (await fetch(`${s.mcpUrl}/info`)).json(), info)
    t.match(info, { name: 'notes-service', version: s.services.version, endpoints: { stream: endpoints.stream, mcp: s.mcpUrl, demo: `${s.mcpUrl}/demo` } })
    t.same(
      info.tools.map((x: { name: string }) => x.name),
      TOOLS.map((x) => x.name),
    )
    for (const tool of info.tools) {
      t.equal(tool.costClass, TOOL_COSTS[tool.name as (typeof TOOL_NAMES)[number]].costClass)
      t.equal(tool.cost, COST_CLASSES[tool.costClass as keyof typeof COST_CLASSES])
    }
    const tool = (name: string) => info.tools.find((x: { name: string }) => x.name === name)
    t.match(tool('import_from_url'), { costClass: 'spends_credits', credits: { amount: 50, per: 'started minute of audio' }, readOnly: false, demo: false })
    t.match(tool('generate_ai_notes'), { costClass: 'spends_credits', cost: 'spends credits', credits: { amount: 100, per: 'template', operation: 'analysis' }, readOnly: false, demo: false })
    t.match(tool('generate_outline'), { costClass: 'spends_credits', credits: { amount: 50, per: 'request', operation: 'outline' }, readOnly: false, demo: false })
    t.match(tool('ask_note'), { costClass: 'spends_credits', credits: { amount: 10, per: 'request', operation: 'ask' }, readOnly: false, demo: false })
    for (const name of ['get_transcript_segments', 'get_transcript_translation']) {
      t.match(tool(name), { costClass: 'free_truncated_on_free_plan', cost: 'free, but the content is truncated on the free plan', credits: null, readOnly: true, demo: true, description: /free plan/ })
    }
    for (const name of ['list_highlights', 'get_outline', 'list_markers', 'get_speaker_timeline', 'list_voice_profiles']) t.match(tool(name), { costClass: 'free', credits: null, readOnly: true, demo: true }, name)
    for (const name of ['replace_in_transcript', 'suggest_speaker_names', 'rename_speaker']) t.match(tool(name), { costClass: 'free', credits: null, readOnly: false, demo: false }, name)
    t.match(tool('suggest_speaker_names'), { description: /10 per hour per API key or OAuth grant/ })
    t.match(tool('extract_clip'), { costClass: 'spends_credits', credits: { amount: 5, per: 'clip', operation: 'clip' }, readOnly: false, demo: false })
    t.equal(info.tools.length, 21, 'all 21 tools of the spec')
    t.same(
      info.auth.methods.map((m: { type: string }) => m.type),
      ['api_key', 'oauth2', 'none'],
    )
    t.match(info.auth.methods[1], { pkce: ['S256'], grantTypes: ['authorization_code', 'refresh_token'], accessTokenSeconds: 3600, refreshTokenSeconds: 30 * 86400, grantSeconds: 90 * 86400 })
    t.match(info.demo, { limit: { requests: 10, windowSeconds: 600, per: 'ip' } })
  })
})

t.test('the per-credential rate limit applies to MCP too', async (t) => {
  const s = await mcpTestService({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_SECONDS: '60' } })
  t.teardown(s.close)
  const a = await s.account('free')
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
  const post = (who = a) => fetch(`${s.base}/mcp/stream`, { method: 'POST', headers: { ...json, accept: 'application/json, text/event-stream', ...who.headers }, body })
  for (let i = 0; i < 3; i++) t.equal((await post()).status, 200)
  const limited = await post()
  t.equal(limited.status, 429)
  const b = await limited.json()
  t.match(b, { error: 'rate_limit_exceeded' })
  t.equal(limited.headers.get('retry-after'), String(b.retryAfter))
  t.equal((await post(await s.account('free'))).status, 200, 'another key has its own budget')
})
