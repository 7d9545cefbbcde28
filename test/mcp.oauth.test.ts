// OAuth 2.1 for AI clients (spec part 5, the MCP authorization spec): discovery (RFC 9728,
// RFC 8414), dynamic client registration (RFC 7591), authorization code with PKCE S256, the
// consent page, tokens, refresh with rotation, expiry, revocation; walked once by the SDK's own
// client exactly as an AI client does it, and then failure by failure over plain HTTP.
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema, type OAuthClientInformationMixed, type OAuthClientMetadata, type OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { mcpTestService, structured } from './support/mcp.ts'
import { Browser, hiddenFields, pkce } from './support/oauthBrowser.ts'

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR

/** The SDK's client-side OAuth state, kept in memory the way an AI client keeps it. */
class TestClientProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ''
  authorizationUrls: URL[] = []
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Test AI client', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }
  state() {
    return 'state-123'
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url)
  }
  saveCodeVerifier(v: string) {
    this.verifier = v
  }
  codeVerifier() {
    return this.verifier
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined
    if (scope === 'all' || scope === 'client') this.info = undefined
  }
}

t.test('OAuth 2.1 for AI clients', async (t) => {
  let offset = 0
  const advance = (ms: number) => void (offset += ms)
  const s = await mcpTestService({ clock: () => new Date(Date.now() + offset) })
  t.teardown(s.close)
  const user = await s.account('pro')
  const redirectUri = 'http://127.0.0.1:43110/callback'
  // Every code, token and secret handed out, to show later that none of them is in the event store.
  const issued: string[] = []

  const register = async (meta: Record<string, unknown> = {}) => {
    const r = await fetch(`${s.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Manual client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', ...meta }) })
    const body = await r.json()
    if (body.client_secret) issued.push(body.client_secret)
    return { status: r.status, body }
  }
  const authorizeUrl = (clientId: string, p: Record<string, string | undefined>) => {
    const u = new URL(`${s.base}/oauth/authorize`)
    const params = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge_method: 'S256', state: 'st-1', scope: 'mcp', resource: s.mcpUrl, ...p }
    for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v)
    return u
  }
  /** The person approves in the browser; returns where the browser is sent. */
  const approve = async (browser: Browser, url: URL, apiKey = user.apiKey, decision = 'approve') => {
    const page = await browser.get(url)
    if (page.status === 302) return new URL(page.headers.get('location')!)
    if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${await page.text()}`)
    const form = hiddenFields(await page.text())
    const r = await browser.post(`${s.base}/oauth/authorize`, { ...form, ...(browser.cookies.has('oauth_session') ? {} : { api_key: apiKey }), decision })
    if (r.status !== 302) throw new Error(`approval answered ${r.status}: ${await r.text()}`)
    return new URL(r.headers.get('location')!)
  }
  const codeFor = async (clientId: string, challenge: string, browser = new Browser()) => {
    const back = await approve(browser, authorizeUrl(clientId, { code_challenge: challenge }))
    const code = back.searchParams.get('code')!
    issued.push(code)
    return code
  }
  const token = async (form: Record<string, string>, headers: Record<string, string> = {}) => {
    const r = await fetch(`${s.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form) })
    const body = await r.json()
    if (body.access_token) issued.push(body.access_token, body.refresh_token)
    return { status: r.status, body, headers: r.headers }
  }
  const mcpCall = (accessToken: string, url = s.mcpUrl) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'founder_status', arguments: {} } }),
    })
  /** A registered public client with tokens, ready for the failure cases. */
  const tokensFor = async () => {
    const client = (await register()).body.client_id as string
    const { verifier, challenge } = pkce()
    const code = await codeFor(client, challenge)
    const r = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client, resource: s.mcpUrl })
    if (r.status !== 200) throw new Error(JSON.stringify(r.body))
    return { client, ...r.body } as { client: string; access_token: string; refresh_token: string }
  }
  const grantEvents = async () => (await s.services.events.readAll({ filter: { categories: ['oauthgrant'] } })).map((e) => ({ stream: e.streamName, type: e.type, data: e.data }))

  t.test('discovery: protected resource metadata at {mcp_url} and for /mcp/stream, authorization server metadata at {base_url}', async (t) => {
    const prm = OAuthProtectedResourceMetadataSchema.parse(await (await fetch(`${s.mcpUrl}/.well-known/oauth-protected-resource`)).json())
    t.match(prm, { resource: s.mcpUrl, authorization_servers: [s.base], scopes_supported: ['mcp'], bearer_methods_supported: ['header'] })
    const prm2 = OAuthProtectedResourceMetadataSchema.parse(await (await fetch(`${s.base}/.well-known/oauth-protected-resource/mcp/stream`)).json())
    t.equal(prm2.resource, `${s.base}/mcp/stream`)
    const as = OAuthMetadataSchema.parse(await (await fetch(`${s.base}/.well-known/oauth-authorization-server`)).json())
    t.match(as, {
      issuer: s.base,
      authorization_endpoint: `${s.base}/oauth/authorize`,
      token_endpoint: `${s.base}/oauth/token`,
      registration_endpoint: `${s.base}/oauth/register`,
      revocation_endpoint: `${s.base}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
    })
  })

  t.test('an AI client walks the whole flow with the SDK: 401, discovery, registration, PKCE authorization, token, tool call, refresh, expiry', async (t) => {
    const provider = new TestClientProvider(redirectUri)
    const browser = new Browser()
    const first = new StreamableHTTPClientTransport(new URL(s.mcpUrl), { authProvider: provider })
    // No token yet: the server answers 401; the SDK discovers, registers and sends the user to authorize.
    t.ok((await new Client({ name: 'ai', version: '1' }).connect(first).catch((e: unknown) => e)) instanceof UnauthorizedError, 'the first connect asks for authorization')
    t.ok(provider.info?.client_id, 'registered dynamically')
    t.equal(provider.authorizationUrls.length, 1)
    const authUrl = provider.authorizationUrls[0]!
    t.match(Object.fromEntries(authUrl.searchParams), { response_type: 'code', client_id: provider.info!.client_id, code_challenge_method: 'S256', redirect_uri: redirectUri, state: 'state-123', resource: s.mcpUrl, scope: 'mcp' })

    // The person sees the consent page once for this client, signs in with their key, approves.
    const page = await browser.get(authUrl)
    t.equal(page.status, 200)
    const html = await page.text()
    t.match(html, /Allow <em>Test AI client<\/em> to use your notes\?/)
    t.match(html, /name="api_key"/)
    t.equal(page.headers.get('x-frame-options'), 'DENY')
    const back = await browser.post(`${s.base}/oauth/authorize`, { ...hiddenFields(html), api_key: user.apiKey, decision: 'approve' })
    t.equal(back.status, 302)
    const callback = new URL(back.headers.get('location')!)
    t.equal(`${callback.origin}${callback.pathname}`, redirectUri)
    t.equal(callback.searchParams.get('state'), 'state-123')
    t.equal(callback.searchParams.get('iss'), s.base)
    const code = callback.searchParams.get('code')!
    issued.push(code)

    // The client exchanges the code (with its PKCE verifier) and connects again.
    await first.finishAuth(code)
    t.match(provider.saved, { token_type: 'Bearer', expires_in: 3600, scope: 'mcp', access_token: /^oat_/, refresh_token: /^ort_/ })
    issued.push(provider.saved!.access_token, provider.saved!.refresh_token!)
    const client = new Client({ name: 'ai', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(s.mcpUrl), { authProvider: provider }))
    t.match(structured(await client.callTool({ name: 'founder_status', arguments: {} })), { accountId: user.accountId, plan: 'pro' })
    t.ok(structured(await client.callTool({ name: 'list_recent_notes', arguments: {} })))

    const grants = await grantEvents()
    t.same(
      grants.map((e) => e.type),
      ['OAuthAuthorizationGranted', 'OAuthCodeRedeemed'],
    )
    const stream = grants[0]!.stream
    t.match(stream, /^oauthgrant-[0-9a-f-]{36}$/)
    t.match(grants[0]!.data, { accountId: user.accountId, clientId: provider.info!.client_id, resource: s.mcpUrl, scope: 'mcp' })
    const clients = await s.services.events.readAll({ filter: { categories: ['oauthclient'] } })
    t.match(clients, [{ streamName: `oauthclient-${provider.info!.client_id}`, type: 'OAuthClientRegistered', data: { clientName: 'Test AI client', redirectUris: [redirectUri], tokenEndpointAuthMethod: 'none' } }])
    t.match(await s.services.events.readStream(`oauthconsent-${user.accountId}`), { events: [{ type: 'OAuthConsentGiven', data: { clientId: provider.info!.client_id } }] })

    // An hour later the access token has expired: the client refreshes by itself and goes on.
    const before = provider.saved!.access_token
    advance(61 * MIN)
    t.equal((await mcpCall(before)).status, 401)
    t.match(structured(await client.callTool({ name: 'founder_status', arguments: {} })), { accountId: user.accountId })
    t.not(provider.saved!.access_token, before, 'a new access token')
    issued.push(provider.saved!.access_token, provider.saved!.refresh_token!)
    t.same(
      (await grantEvents()).filter((e) => e.stream === stream).map((e) => e.type),
      ['OAuthAuthorizationGranted', 'OAuthCodeRedeemed', 'OAuthTokensRefreshed'],
    )

    // 91 days after the approval nothing of this grant works; the client must authorize again.
    advance(91 * DAY)
    t.ok((await client.callTool({ name: 'founder_status', arguments: {} }).catch((e: unknown) => e)) instanceof UnauthorizedError, 'the refresh is refused: authorize again')
    t.equal(provider.authorizationUrls.length, 2, 'sent back to the authorization endpoint')
    // Approved once for this client, and the browser is still signed in: no consent screen.
    const again = await browser.get(provider.authorizationUrls[1]!)
    t.equal(again.status, 302)
    const code2 = new URL(again.headers.get('location')!).searchParams.get('code')!
    issued.push(code2)
    const transport = new StreamableHTTPClientTransport(new URL(s.mcpUrl), { authProvider: provider })
    await transport.finishAuth(code2)
    const fresh = new Client({ name: 'ai', version: '1' })
    await fresh.connect(new StreamableHTTPClientTransport(new URL(s.mcpUrl), { authProvider: provider }))
    t.match(structured(await fresh.callTool({ name: 'founder_status', arguments: {} })), { accountId: user.accountId })
    issued.push(provider.saved!.access_token, provider.saved!.refresh_token!)
    await client.close()
    await fresh.close()
  })

  t.test('the same token works at POST {base_url}/mcp/stream, on every plan', async (t) => {
    const free = await s.account('free')
    const client = (await register()).body.client_id as string
    const { verifier, challenge } = pkce()
    const back = await approve(new Browser(), authorizeUrl(client, { code_challenge: challenge, resource: `${s.base}/mcp/stream` }), free.apiKey)
    const code = back.searchParams.get('code')!
    issued.push(code)
    const r = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client, resource: `${s.base}/mcp/stream` })
    t.equal(r.status, 200)
    t.equal(r.headers.get('cache-control'), 'no-store')
    const c = await s.connect(`${s.base}/mcp/stream`, { authorization: `Bearer ${r.body.access_token}` })
    t.match(structured(await c.callTool({ name: 'founder_status', arguments: {} })), { accountId: free.accountId, plan: 'free' })
  })

  t.test('PKCE: plain, a missing method and a missing challenge are refused on the error page', async (t) => {
    const client = (await register()).body.client_id as string
    const { verifier, challenge } = pkce()
    for (const p of [{ code_challenge: verifier, code_challenge_method: 'plain' }, { code_challenge: challenge, code_challenge_method: undefined }, { code_challenge: undefined }]) {
      const r = await new Browser().get(authorizeUrl(client, p))
      t.equal(r.status, 400, JSON.stringify(p))
      t.notOk(r.headers.get('location'), 'never redirected before the person signed in (RFC 9700 section 4.11.2)')
      t.match(await r.text(), /S256|PKCE/)
    }
    t.same(
      (await grantEvents()).filter((e) => (e.data as { clientId?: string }).clientId === client),
      [],
      'no grant opened',
    )
  })

  t.test('a wrong code_verifier is invalid_grant; the code still works with the right one', async (t) => {
    const client = (await register()).body.client_id as string
    const { verifier, challenge } = pkce()
    const code = await codeFor(client, challenge)
    const wrong = await token({ grant_type: 'authorization_code', code, code_verifier: pkce().verifier, redirect_uri: redirectUri, client_id: client })
    t.equal(wrong.status, 400)
    t.match(wrong.body, { error: 'invalid_grant', error_description: /code_verifier/ })
    const missing = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: client })
    t.match(missing.body, { error: 'invalid_request' })
    const right = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client })
    t.equal(right.status, 200)
  })

  t.test('a reused code is refused and revokes every token issued from it', async (t) => {
    const client = (await register()).body.client_id as string
    const { verifier, challenge } = pkce()
    const code = await codeFor(client, challenge)
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client }
    const first = await token(form)
    t.equal(first.status, 200)
    t.equal((await mcpCall(first.body.access_token)).status, 200)
    const second = await token(form)
    t.equal(second.status, 400)
    t.match(second.body, { error: 'invalid_grant', error_description: /already used/ })
    t.equal((await mcpCall(first.body.access_token)).status, 401, 'the first exchange’s access token is revoked')
    t.match(await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: client }), { status: 400, body: { error: 'invalid_grant' } })
    const revoked = (await grantEvents()).filter((e) => e.type === 'OAuthGrantRevoked')
    t.ok(revoked.some((e) => (e.data as { reason: string }).reason === 'code_reuse'))
  })

  t.test('refresh rotates the refresh token; reusing a rotated one revokes the grant', async (t) => {
    const g = await tokensFor()
    const r1 = await token({ grant_type: 'refresh_token', refresh_token: g.refresh_token, client_id: g.client })
    t.equal(r1.status, 200)
    t.not(r1.body.refresh_token, g.refresh_token, 'rotated')
    t.equal((await mcpCall(g.access_token)).status, 401, 'the previous access token is replaced')
    t.equal((await mcpCall(r1.body.access_token)).status, 200)
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: g.refresh_token, client_id: g.client })
    t.equal(reuse.status, 400)
    t.match(reuse.body, { error: 'invalid_grant', error_description: /already used/ })
    t.equal((await mcpCall(r1.body.access_token)).status, 401, 'every token of the grant is dead')
    t.match(await token({ grant_type: 'refresh_token', refresh_token: r1.body.refresh_token, client_id: g.client }), { status: 400, body: { error: 'invalid_grant' } })
    const grant = r1.body.access_token.split('_')[1]
    t.same(
      (await s.services.events.readStream(`oauthgrant-${grant}`)).events.map((e) => [e.type, (e.data as { reason?: string }).reason ?? null]),
      [
        ['OAuthAuthorizationGranted', null],
        ['OAuthCodeRedeemed', null],
        ['OAuthTokensRefreshed', null],
        ['OAuthGrantRevoked', 'refresh_token_reuse'],
      ],
    )
  })

  t.test('the consent page: CSRF-protected, a wrong key is refused, a deny before signing in is not redirected, bad requests never redirect', async (t) => {
    const client = (await register()).body.client_id as string
    const { challenge } = pkce()
    const url = authorizeUrl(client, { code_challenge: challenge })
    const browser = new Browser()
    const form = hiddenFields(await (await browser.get(url)).text())
    t.ok(form.csrf)
    const stranger = await fetch(`${s.base}/oauth/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...form, api_key: user.apiKey, decision: 'approve' }) })
    t.equal(stranger.status, 403, 'a form posted without the page’s cookie (another site) is refused')
    const other = hiddenFields(await (await browser.get(authorizeUrl(client, { code_challenge: pkce().challenge }))).text())
    const swapped = await browser.post(`${s.base}/oauth/authorize`, { ...form, csrf: other.csrf!, api_key: user.apiKey, decision: 'approve' })
    t.equal(swapped.status, 403, 'a token from another authorization request does not fit')
    const wrongKey = await browser.post(`${s.base}/oauth/authorize`, { ...form, api_key: `${user.apiKey.slice(0, -2)}xx`, decision: 'approve' })
    t.equal(wrongKey.status, 401)
    t.match(await wrongKey.text(), /not valid/)
    t.notOk(wrongKey.headers.get('location'))
    const denied = await browser.post(`${s.base}/oauth/authorize`, { ...form, decision: 'deny' })
    t.equal(denied.status, 200)
    t.notOk(denied.headers.get('location'))
    t.match(await denied.text(), /You declined[\s\S]*error=access_denied/, 'the way back is a link the person may follow')
    for (const bad of [authorizeUrl('6f1c2f8e-2b5a-4c1e-9a57-0f1d2c3b4a59', { code_challenge: challenge }), authorizeUrl(client, { code_challenge: challenge, redirect_uri: 'http://127.0.0.1:9999/evil' })]) {
      const r = await new Browser().get(bad)
      t.equal(r.status, 400)
      t.notOk(r.headers.get('location'), 'an unknown client or redirect URI is never redirected to')
    }
    const target = await new Browser().get(authorizeUrl(client, { code_challenge: challenge, resource: 'https://elsewhere.example.com/mcp' }))
    t.equal(target.status, 400)
    t.notOk(target.headers.get('location'))
    t.match(await target.text(), /invalid_target/)
  })

  t.test('registration: redirect URIs are checked; a confidential client authenticates at the token endpoint', async (t) => {
    t.match(await register({ redirect_uris: ['http://evil.example.com/cb'] }), { status: 400, body: { error: 'invalid_redirect_uri' } })
    t.match(await register({ redirect_uris: ['javascript:alert(1)'] }), { status: 400, body: { error: 'invalid_redirect_uri' } })
    t.match(await register({ redirect_uris: [] }), { status: 400, body: { error: 'invalid_client_metadata' } })
    t.match(await register({ scope: 'admin' }), { status: 400, body: { error: 'invalid_client_metadata' } })
    const conf = await register({ token_endpoint_auth_method: 'client_secret_basic' })
    t.equal(conf.status, 201)
    t.match(conf.body, { client_id: /^[0-9a-f-]{36}$/, client_secret: /\S{40,}/, token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code', 'refresh_token'], scope: 'mcp' })
    const { verifier, challenge } = pkce()
    const code = await codeFor(conf.body.client_id, challenge)
    const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`${conf.body.client_id}:${secret}`).toString('base64')}` })
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri }
    const wrong = await token(form, basic('nope'))
    t.equal(wrong.status, 401)
    t.match(wrong.body, { error: 'invalid_client' })
    t.match(wrong.headers.get('www-authenticate'), /Basic/)
    t.match(await token({ ...form, client_id: conf.body.client_id }), { status: 401, body: { error: 'invalid_client' } }, 'no secret, no token')
    const thief = (await register()).body.client_id as string
    t.match(await token({ ...form, client_id: thief }), { status: 400, body: { error: 'invalid_grant' } }, 'another client cannot redeem the code')
    t.match(await token(form, basic(conf.body.client_secret)), { status: 200, body: { token_type: 'Bearer' } })
    t.match(await token({ grant_type: 'client_credentials', client_id: thief }), { status: 400, body: { error: 'unsupported_grant_type' } })
    t.match(await token({ grant_type: 'password', client_id: thief }), { status: 400, body: { error: 'unsupported_grant_type' } })
  })

  t.test('revocation (RFC 7009) ends the whole grant', async (t) => {
    const g = await tokensFor()
    const r = await fetch(`${s.base}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: g.refresh_token, client_id: g.client }) })
    t.equal(r.status, 200)
    t.equal((await mcpCall(g.access_token)).status, 401)
    t.match(await token({ grant_type: 'refresh_token', refresh_token: g.refresh_token, client_id: g.client }), { status: 400, body: { error: 'invalid_grant' } })
    const unknown = await fetch(`${s.base}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: 'whatever', client_id: g.client }) })
    t.equal(unknown.status, 200, 'an unknown token is not an error')
  })

  t.test('expiry: access after 1 hour, refresh after 30 days unused, everything 90 days after the approval', async (t) => {
    const g = await tokensFor()
    advance(61 * MIN)
    const expired = await mcpCall(g.access_token)
    t.equal(expired.status, 401)
    t.match(expired.headers.get('www-authenticate'), /error="invalid_token"/)
    let current = (await token({ grant_type: 'refresh_token', refresh_token: g.refresh_token, client_id: g.client })).body
    t.ok(current.access_token)
    t.equal((await mcpCall(current.access_token)).status, 200)
    // Refreshing every 25 days keeps the grant alive...
    for (let i = 0; i < 3; i++) {
      advance(25 * DAY)
      const r = await token({ grant_type: 'refresh_token', refresh_token: current.refresh_token, client_id: g.client })
      t.equal(r.status, 200, `refresh ${i + 1}`)
      current = r.body
    }
    t.equal((await mcpCall(current.access_token)).status, 200, 'day 75: alive')
    // ...but not past 90 days from the approval, although this refresh token is only 15 days old.
    advance(15 * DAY)
    const late = await token({ grant_type: 'refresh_token', refresh_token: current.refresh_token, client_id: g.client })
    t.equal(late.status, 400)
    t.match(late.body, { error: 'invalid_grant', error_description: /90-day/ })
    t.equal((await mcpCall(current.access_token)).status, 401)

    const idle = await tokensFor()
    advance(30 * DAY + MIN)
    t.match(await token({ grant_type: 'refresh_token', refresh_token: idle.refresh_token, client_id: idle.client }), { status: 400, body: { error: 'invalid_grant', error_description: /30 days/ } })
  })

  t.test('tokens, codes and client secrets exist only in the responses: the events keep their hashes', async (t) => {
    const all = JSON.stringify(await s.services.events.readAll())
    t.ok(issued.length > 20, `${issued.length} secrets handed out`)
    for (const secret of issued.filter(Boolean)) {
      t.notOk(all.includes(secret), `${secret.slice(0, 12)}… is not stored`)
      // Codes and tokens are `<prefix>_<grant id>_<43 random characters>`; client secrets are the 43 alone.
      const raw = secret.slice(-43)
      t.notOk(all.includes(raw), 'nor its random part')
    }
    t.match(all, /"accessTokenHash":"[0-9a-f]{64}"/)
  })
})
