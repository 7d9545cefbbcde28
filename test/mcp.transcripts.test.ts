// The MCP tools over transcripts, translations, speakers and voice profiles (spec parts 1, 4 and
// 8), driven through the SDK's client over streamable HTTP: each answers what its REST twin
// answers; get_transcript_segments is free over MCP (REST charges 1 credit per read) and, with
// get_transcript_translation, shows the free plan a preview that says it is one; and
// suggest_speaker_names shares its 10 per hour with the REST route, per API key or OAuth grant.
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { mcpTestService, structured, toolErrorBody, type McpTestService } from './support/mcp.ts'
import { readyNote, transcriptOf, eventually, type SegmentSpec } from './support/transcripts.ts'
import { startOpenAiServer, chatCompletion } from './support/openaiServer.ts'
import { balance, ledgerShape } from './support/ledger.ts'
import { FREE_PLAN_GET_THE_REST, FREE_PLAN_PREVIEW, FREE_PLAN_PREVIEW_RULE } from '../domain/transcripts/preview.ts'

const json = { 'content-type': 'application/json' }

const EPISODE: SegmentSpec[] = [
  ['A', 0, 3000, 'Bienvenidos a Café Semanal. Hoy me acompaña Luis.'],
  ['B', 3000, 6000, 'Hola a todos.'],
  ['A', 6000, 9000, 'Bueno, empecemos con el presupuesto.'],
  ['B', 9000, 12000, 'El presupuesto de marketing sube un diez por ciento.'],
]
/** `n` short segments, two speakers taking turns. */
const many = (n: number, chars = 30): SegmentSpec[] =>
  Array.from({ length: n }, (_, i) => [i % 2 ? 'B' : 'A', i * 2000, i * 2000 + 1900, `Segment ${String(i).padStart(2, '0')} `.padEnd(chars, 'x')])

/** An OAuth access token for `accountId`, issued through the authorization server's own commands. */
async function oauthAccessToken(s: McpTestService, accountId: string): Promise<string> {
  const redirectUri = 'http://127.0.0.1:9/callback'
  const client = await s.services.oauth.registerClient({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' })
  const verifier = randomBytes(48).toString('base64url')
  const checked = await s.services.oauth.checkAuthorizationRequest({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: s.mcpUrl,
  })
  if (!checked.ok) throw new Error('authorization request refused')
  const { redirect } = await s.services.oauth.approve(accountId, checked.request, { kind: 'person', personId: 'test-person' })
  const code = new URL(redirect).searchParams.get('code')!
  const tokens = await s.services.oauth.token(
    { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.client_id },
    { basic: null, clientId: client.client_id, clientSecret: undefined },
  )
  return tokens.access_token
}

t.test('transcripts and speakers over MCP', async (t) => {
  const s = await mcpTestService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const endpoint = `${s.base}/mcp/stream`
  const c = await s.connect(endpoint, a.headers)
  const rest = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, headers = a.headers) =>
    s.inject({ method, url, headers: { ...headers, ...(body ? json : {}) }, ...(body ? { payload: JSON.stringify(body) } : {}) })
  const episode = () => readyNote(s, a.accountId, { title: 'Café Semanal #1', transcript: transcriptOf(EPISODE) })

  t.test('get_transcript_segments: the body of GET /v1/notes/{id}/transcript, free over MCP (REST charges 1 credit)', async (t) => {
    const noteId = await episode()
    const viaMcp = structured(await c.callTool({ name: 'get_transcript_segments', arguments: { noteId } }))
    const before = await ledgerShape(s, a.accountId)
    t.same(before.filter((e) => e.operation === 'transcript'), [], 'the tool charged nothing')
    const r = await rest('GET', `/v1/notes/${noteId}/transcript`)
    t.equal(r.statusCode, 200)
    t.same(viaMcp, r.json())
    t.notOk('truncated' in viaMcp, 'a pro plan sees it whole')
    t.equal(viaMcp.segments.length, 4)
    t.match(viaMcp.segments[0], { sequence: 0, startMs: 0, endMs: 3000, speakerLabel: 'A', text: /Café Semanal/ })
    t.match((await ledgerShape(s, a.accountId)).at(-1), { type: 'CreditsCharged', operation: 'transcript', delta: -1 }, 'the REST read is charged')
    // With a translation that was never requested: no_transcript, like REST, never the original text.
    const withFr = await c.callTool({ name: 'get_transcript_segments', arguments: { noteId, translation: 'fr' } })
    const restFr = await rest('GET', `/v1/notes/${noteId}/transcript?translation=fr`)
    t.equal(restFr.statusCode, 404)
    // The tool's refusal is REST's body plus the advice of domain/advice.ts as the agent's next step.
    const { next, ...mcpBody } = toolErrorBody(withFr) as { next?: unknown }
    t.same(mcpBody, restFr.json())
    t.match(next, /translation must be requested/)
    t.match(toolErrorBody(withFr), { error: 'no_transcript', message: /no fr translation/ })
    t.equal((await c.callTool({ name: 'get_transcript_segments', arguments: { noteId, translation: 'xx' } })).isError, true)
    const stranger = await s.connect(endpoint, (await s.account('pro')).headers)
    t.match(toolErrorBody(await stranger.callTool({ name: 'get_transcript_segments', arguments: { noteId } })), { error: 'no_transcript' })
  })

  t.test('on the free plan: a preview of the first segments, and the result says how much and how to get the rest', async (t) => {
    const free = await s.account('free')
    const fc = await s.connect(s.mcpUrl, free.headers)
    // More segments than the preview holds.
    const long = await readyNote(s, free.accountId, { transcript: transcriptOf(many(30)) })
    const cut = structured(await fc.callTool({ name: 'get_transcript_segments', arguments: { noteId: long } }))
    t.equal(cut.truncated, true)
    t.same(cut.truncation, {
      shownSegments: FREE_PLAN_PREVIEW.maxSegments,
      totalSegments: 30,
      shownCharacters: FREE_PLAN_PREVIEW.maxSegments * 30,
      totalCharacters: 30 * 30,
      rule: FREE_PLAN_PREVIEW_RULE,
      getTheRest: FREE_PLAN_GET_THE_REST,
    })
    t.equal(cut.segments.length, 20)
    t.same(cut.segments.map((x: { sequence: number }) => x.sequence), [...Array(20).keys()], 'from the start, in order')
    t.notMatch(cut.fullText, /Segment 20/, 'the full text is cut with the segments')
    t.match(FREE_PLAN_PREVIEW_RULE, /first 20 segments.*2,000 characters/)
    // Longer texts: the character bound cuts first.
    const wordy = await readyNote(s, free.accountId, { transcript: transcriptOf(many(6, 500)) })
    const byChars = structured(await fc.callTool({ name: 'get_transcript_segments', arguments: { noteId: wordy } }))
    t.match(byChars, { truncated: true, truncation: { shownSegments: 4, totalSegments: 6, shownCharacters: 2000, totalCharacters: 3000 } })
    // A transcript within the preview comes whole, without the flags.
    const short = await readyNote(s, free.accountId, { transcript: transcriptOf(EPISODE) })
    const whole = structured(await fc.callTool({ name: 'get_transcript_segments', arguments: { noteId: short } }))
    t.equal(whole.segments.length, 4)
    t.notOk('truncated' in whole || 'truncation' in whole)
    t.equal(await balance(s, free.accountId), 200, 'free of charge on the free plan too')
    // Any paid plan gets everything over MCP.
    const personal = await s.account('personal')
    const mine = await readyNote(s, personal.accountId, { transcript: transcriptOf(many(30)) })
    const full = structured(await (await s.connect(s.mcpUrl, personal.headers)).callTool({ name: 'get_transcript_segments', arguments: { noteId: mine } }))
    t.equal(full.segments.length, 30)
    t.notOk('truncated' in full)
  })

  t.test('get_transcript_translation: the body of GET /v1/notes/{id}/transcript/translation', async (t) => {
    const noteId = await episode()
    const none = structured(await c.callTool({ name: 'get_transcript_translation', arguments: { noteId, language: 'en' } }))
    t.same(none, (await rest('GET', `/v1/notes/${noteId}/transcript/translation?language=en`)).json())
    t.match(none, { language: 'en', status: 'none', segments: [], progress: { translatedSegments: 0, totalSegments: 4 } })
    t.same(structured(await c.callTool({ name: 'get_transcript_translation', arguments: { noteId } })), none, 'en by default, as REST without Accept-Language')
    t.equal((await c.callTool({ name: 'get_transcript_translation', arguments: { noteId, language: 'xx' } })).isError, true)
  })

  t.test('get_speaker_timeline and rename_speaker: the bodies of their REST twins; names show in the transcript', async (t) => {
    const noteId = await episode()
    const twin = await episode()
    const timeline = structured(await c.callTool({ name: 'get_speaker_timeline', arguments: { noteId } }))
    t.same(timeline, (await rest('GET', `/v1/notes/${noteId}/speakers/timeline`)).json())
    t.same(
      timeline.turns.map((x: { speakerLabel: string; startMs: number }) => `${x.speakerLabel}@${x.startMs}`),
      ['A@0', 'B@3000', 'A@6000', 'B@9000'],
    )
    const renamed = structured(await c.callTool({ name: 'rename_speaker', arguments: { noteId, label: 'B', name: '  Luis Ortega ' } }))
    const patched = (await rest('PATCH', `/v1/notes/${twin}/speakers/B`, { name: '  Luis Ortega ' })).json()
    t.same({ ...renamed, noteId: null }, { ...patched, noteId: null }, 'the same SpeakerList as PATCH')
    t.match(renamed.speakers[1], { label: 'B', name: 'Luis Ortega', nameStatus: 'confirmed' })
    t.same(renamed, (await rest('GET', `/v1/notes/${noteId}/speakers`)).json())
    const after = structured(await c.callTool({ name: 'get_speaker_timeline', arguments: { noteId } }))
    t.same(after.turns.map((x: { speakerName: string | null }) => x.speakerName), [null, 'Luis Ortega', null, 'Luis Ortega'])
    const segments = structured(await c.callTool({ name: 'get_transcript_segments', arguments: { noteId } }))
    t.equal(segments.segments[1].speakerName, 'Luis Ortega')
    // The same name again changes nothing; `voiceExcluded` goes along as in PATCH.
    const events = (await s.services.events.readStream(`note-${noteId}`)).events.length
    structured(await c.callTool({ name: 'rename_speaker', arguments: { noteId, label: 'B', name: 'Luis Ortega' } }))
    t.equal((await s.services.events.readStream(`note-${noteId}`)).events.length, events)
    t.match(structured(await c.callTool({ name: 'rename_speaker', arguments: { noteId, label: 'A', name: 'Marta', voiceExcluded: true } })).speakers[0], { name: 'Marta', voiceExcluded: true })
    t.match(toolErrorBody(await c.callTool({ name: 'rename_speaker', arguments: { noteId, label: 'Z', name: 'Nobody' } })), { error: 'not_found' })
    // Another account's note: the common not_found, as REST (issue 17, item 5).
    const stranger = await s.connect(endpoint, (await s.account('pro')).headers)
    t.match(toolErrorBody(await stranger.callTool({ name: 'rename_speaker', arguments: { noteId, label: 'A', name: 'Mallory' } })), { error: 'not_found' })
    t.match(toolErrorBody(await stranger.callTool({ name: 'replace_in_transcript', arguments: { noteId, find: 'a', replace: 'b' } })), { error: 'not_found' })
    t.equal((await c.callTool({ name: 'rename_speaker', arguments: { noteId, label: 'A', name: '' } })).isError, true)
    t.equal((await c.callTool({ name: 'rename_speaker', arguments: { noteId, label: 'A', name: 'x'.repeat(121) } })).isError, true)
  })

  t.test('replace_in_transcript: the body of POST transcript/replace; the transcript follows', async (t) => {
    const noteId = await episode()
    const twin = await episode()
    const args = { find: 'presupuesto', replace: 'budget' }
    const m = structured(await c.callTool({ name: 'replace_in_transcript', arguments: { noteId, ...args } }))
    const r = (await rest('POST', `/v1/notes/${twin}/transcript/replace`, args)).json()
    t.same({ ...m, noteId: null }, { ...r, noteId: null })
    t.match(m, { occurrences: 2, changedSegments: [{ sequence: 2, after: 'Bueno, empecemos con el budget.' }, { sequence: 3 }], staleTranslations: [] })
    const read = structured(await c.callTool({ name: 'get_transcript_segments', arguments: { noteId } }))
    t.match(read.fullText, /empecemos con el budget/)
    t.match(structured(await c.callTool({ name: 'replace_in_transcript', arguments: { noteId, find: 'nada parecido', replace: 'x' } })), { occurrences: 0, changedSegments: [] })
    t.equal((await c.callTool({ name: 'replace_in_transcript', arguments: { noteId, find: '', replace: 'x' } })).isError, true)
    const { tools } = await c.listTools()
    t.equal(tools.find((x) => x.name === 'replace_in_transcript')!.annotations?.destructiveHint, true)
  })

  t.test('suggest_speaker_names: the body of POST speakers/suggest; note_not_ready before the note is ready', async (t) => {
    const b = await s.account('pro')
    const bc = await s.connect(endpoint, b.headers)
    const greeting: SegmentSpec[] = [
      ['A', 0, 1000, 'Bienvenido, Carlos.'],
      ['B', 1000, 2000, 'Hola.'],
    ]
    const noteId = await readyNote(s, b.accountId, { transcript: transcriptOf(greeting) })
    const twin = await readyNote(s, b.accountId, { transcript: transcriptOf(greeting) })
    const m = structured(await bc.callTool({ name: 'suggest_speaker_names', arguments: { noteId } }))
    const r = (await rest('POST', `/v1/notes/${twin}/speakers/suggest`, undefined, b.headers)).json()
    t.same({ ...m, noteId: null }, { ...r, noteId: null })
    t.match(m.speakers[1], { label: 'B', suggestedName: 'Carlos', suggestedNameConfidence: 0.5, evidence: [{ source: 'transcript', segment: 0, quote: 'Bienvenido, Carlos.' }] })
    const processing = await readyNote(s, b.accountId, { transcript: transcriptOf(EPISODE), ready: false })
    t.match(toolErrorBody(await bc.callTool({ name: 'suggest_speaker_names', arguments: { noteId: processing } })), { error: 'note_not_ready' })
  })

  t.test('list_voice_profiles: the body of GET /v1/voice-profiles', async (t) => {
    const profiles = structured(await c.callTool({ name: 'list_voice_profiles', arguments: {} }))
    t.same(profiles, (await rest('GET', '/v1/voice-profiles')).json())
    t.match(profiles, { consent: { status: 'never' }, profiles: [], voiceMatching: { available: false } })
  })

  t.test('10 suggestions per hour per API key, counted together for REST and MCP; an OAuth grant has its own', async (t) => {
    const b = await s.account('pro')
    const noteId = await readyNote(s, b.accountId, { transcript: transcriptOf(EPISODE) })
    const bc = await s.connect(s.mcpUrl, b.headers)
    const viaRest = () => rest('POST', `/v1/notes/${noteId}/speakers/suggest`, undefined, b.headers)
    const viaMcp = () => bc.callTool({ name: 'suggest_speaker_names', arguments: { noteId } })
    for (let i = 0; i < 5; i++) {
      t.equal((await viaRest()).statusCode, 200)
      structured(await viaMcp())
    }
    const mcpRefused = toolErrorBody(await viaMcp())
    t.match(mcpRefused, { error: 'rate_limit_exceeded', message: /10 calls per 3600 s/ })
    t.ok(mcpRefused.retryAfter > 3500 && mcpRefused.retryAfter <= 3600, `retryAfter ${mcpRefused.retryAfter}`)
    const restRefused = await viaRest()
    t.equal(restRefused.statusCode, 429)
    t.match(restRefused.json(), { error: 'rate_limit_exceeded' })
    t.ok(restRefused.json().retryAfter > 3500 && restRefused.json().retryAfter <= 3600)
    t.equal((await rest('GET', `/v1/notes/${noteId}/speakers`, undefined, b.headers)).statusCode, 200, 'the other speaker routes are not limited')
    structured(await bc.callTool({ name: 'get_speaker_timeline', arguments: { noteId } }))

    // The other way round on a fresh key: ten over MCP, then REST is refused too.
    const second = await s.services.accounts.createApiKey(b.accountId, 'second')
    const secondHeaders = { authorization: `Bearer ${second.apiKey}` }
    const sc = await s.connect(endpoint, secondHeaders)
    for (let i = 0; i < 10; i++) structured(await sc.callTool({ name: 'suggest_speaker_names', arguments: { noteId } }))
    t.equal((await rest('POST', `/v1/notes/${noteId}/speakers/suggest`, undefined, secondHeaders)).statusCode, 429, 'the 11th, through REST')

    // An OAuth grant is a credential of its own, with its own ten.
    const token = await oauthAccessToken(s, b.accountId)
    const oc = await s.connect(s.mcpUrl, { authorization: `Bearer ${token}` })
    for (let i = 0; i < 10; i++) structured(await oc.callTool({ name: 'suggest_speaker_names', arguments: { noteId } }))
    t.match(toolErrorBody(await oc.callTool({ name: 'suggest_speaker_names', arguments: { noteId } })), { error: 'rate_limit_exceeded' })
  })
})

t.test('a translation made by the worker, read over MCP, previewed on the free plan', async (t) => {
  // The translation engine is an OpenAI-compatible server that prefixes every segment.
  const llm = await startOpenAiServer((req) => {
    const input = JSON.parse(req.json().messages[1].content) as { segments: { sequence: number; text: string }[] }
    return { json: chatCompletion(JSON.stringify({ segments: input.segments.map((x) => ({ sequence: x.sequence, text: `EN ${x.text}` })) })) }
  })
  t.teardown(llm.close)
  const s = await mcpTestService({ workers: true, env: { LLM_BASE_URL: llm.baseUrl, TRANSLATION_POLL_MS: '50' } })
  t.teardown(s.close)

  const pro = await s.account('pro')
  const free = await s.account('free')
  const translated = async (who: { accountId: string }, specs: SegmentSpec[]) => {
    const noteId = await readyNote(s, who.accountId, { transcript: transcriptOf(specs) })
    await s.services.transcripts.requestTranslation({ accountId: who.accountId, plan: 'pro', keyId: null, requestId: 'test', via: 'admin' }, noteId, 'en')
    await eventually(async () => ((await s.services.transcripts.requestTranslation({ accountId: who.accountId, plan: 'pro', keyId: null, requestId: 'poll', via: 'admin' }, noteId, 'en')).state.status === 'ready' ? true : undefined))
    return noteId
  }

  t.test('a pro plan reads it whole, exactly as REST', async (t) => {
    const noteId = await translated(pro, EPISODE)
    const c = await s.connect(s.mcpUrl, pro.headers)
    const tr = structured(await c.callTool({ name: 'get_transcript_translation', arguments: { noteId, language: 'en' } }))
    t.same(tr, (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript/translation?language=en`, headers: pro.headers })).json())
    t.match(tr, { status: 'ready', progress: { translatedSegments: 4, totalSegments: 4, percent: 100 }, segments: [{ sequence: 0, text: 'EN Bienvenidos a Café Semanal. Hoy me acompaña Luis.' }] })
    const withIt = structured(await c.callTool({ name: 'get_transcript_segments', arguments: { noteId, translation: 'en' } }))
    t.match(withIt, { translation: { language: 'en', status: 'ready' }, segments: [{ translation: 'EN Bienvenidos a Café Semanal. Hoy me acompaña Luis.' }] })
  })

  t.test('the free plan gets the preview, and is told so', async (t) => {
    const noteId = await translated(free, many(25))
    const c = await s.connect(s.mcpUrl, free.headers)
    const tr = structured(await c.callTool({ name: 'get_transcript_translation', arguments: { noteId, language: 'en' } }))
    t.match(tr, { status: 'ready', truncated: true, truncation: { shownSegments: 20, totalSegments: 25, rule: FREE_PLAN_PREVIEW_RULE, getTheRest: FREE_PLAN_GET_THE_REST } })
    t.equal(tr.segments.length, 20)
    t.match(tr.segments[19], { sequence: 19, text: /^EN Segment 19/ })
    t.equal(tr.progress.translatedSegments, 25, 'the state itself is not cut')
    t.equal(await balance(s, free.accountId), 200)
  })
})
