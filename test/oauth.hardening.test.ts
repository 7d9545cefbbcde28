// OAuth holes found by adversarial testing (issue 11), closed and kept closed, black-box: the
// service listens on real ports; the person at the consent page is a cookie-keeping browser; the
// admin command runs as its own process on the same data directory, as an operator runs it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { embeddedEnv } from './support/embeddedEnv.ts'
import { mcpTestService } from './support/mcp.ts'
import { Browser, hiddenFields, pkce } from './support/oauthBrowser.ts'
import { TOOLS } from '../mcp/tools/index.ts'
import { CONSENT_ACTIONS } from '../domain/mcp/tools.ts'

const s = await mcpTestService()
t.teardown(s.close)

const admin = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { env: { ...embeddedEnv(), DATA_DIR: s.dir } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  )

const redirectUri = 'http://127.0.0.1:43110/callback'
async function register(meta: Record<string, unknown> = {}): Promise<string> {
  const r = await fetch(`${s.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Hardening client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', ...meta }) })
  if (r.status !== 201) throw new Error(`registration answered ${r.status}`)
  return (await r.json()).client_id
}
const authorizeUrl = (clientId: string, p: Record<string, string | undefined>) => {
  const u = new URL(`${s.base}/oauth/authorize`)
  const params = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge_method: 'S256', state: 'st-1', scope: 'mcp', resource: s.mcpUrl, ...p }
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v)
  return u
}
/** The person approves on the consent page with the account's API key; returns the redirect back. */
async function approveWithKey(url: URL, apiKey: string): Promise<URL> {
  const browser = new Browser()
  const page = await browser.get(url)
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}`)
  const r = await browser.post(`${s.base}/oauth/authorize`, { ...hiddenFields(await page.text()), api_key: apiKey, decision: 'approve' })
  if (r.status !== 302) throw new Error(`approval answered ${r.status}: ${await r.text()}`)
  return new URL(r.headers.get('location')!)
}
const token = async (form: Record<string, string>) => {
  const r = await fetch(`${s.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })
  return { status: r.status, body: await r.json() }
}
/** A client approved with `apiKey` and its tokens. */
async function grantWith(apiKey: string, resource = s.mcpUrl) {
  const client = await register()
  const { verifier, challenge } = pkce()
  const code = (await approveWithKey(authorizeUrl(client, { code_challenge: challenge, resource }), apiKey)).searchParams.get('code')!
  const r = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client, resource })
  if (r.status !== 200) throw new Error(JSON.stringify(r.body))
  return { client, grantId: r.body.access_token.split('_')[1] as string, access: r.body.access_token as string, refresh: r.body.refresh_token as string }
}
const mcpCall = (accessToken: string, url = s.mcpUrl, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'founder_status', arguments: {} } }) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${accessToken}` }, body: JSON.stringify(body) })

t.test('item 2: revoking the API key that approved a grant revokes the grant; admin list-grants and revoke-grant', async (t) => {
  // An account without a dashboard person: its API keys approve on the consent page.
  const a = await s.account('pro')
  const other = await s.services.accounts.createApiKey(a.accountId, 'second')
  const g1 = await grantWith(a.apiKey)
  const g2 = await grantWith(other.apiKey)
  t.equal((await mcpCall(g1.access)).status, 200)
  t.equal((await mcpCall(g2.access)).status, 200)

  const keyId = a.apiKey.split('_')[1]!
  const revoked = await admin('revoke-key', '--account', a.accountId, '--key', keyId)
  t.equal(revoked.code, 0, revoked.stderr)
  t.match(revoked.stdout, /1 OAuth grant\(s\) it approved revoked/)
  t.equal((await mcpCall(g1.access)).status, 401, 'the access token stops at once, in this other process')
  t.match(await token({ grant_type: 'refresh_token', refresh_token: g1.refresh, client_id: g1.client }), { status: 400, body: { error: 'invalid_grant' } }, 'and no refresh issues new ones')
  t.equal((await mcpCall(g2.access)).status, 200, 'a grant approved with another key lives on')
  t.match((await s.services.events.readStream(`oauthgrant-${g1.grantId}`)).events.at(-1), { type: 'OAuthGrantRevoked', data: { reason: 'api_key_revoked' } })

  const listed = await admin('list-grants', '--account', a.accountId, '--json')
  t.equal(listed.code, 0, listed.stderr)
  t.match(JSON.parse(listed.stdout).grants, [
    { grantId: g2.grantId, status: 'active', approvedBy: { kind: 'api_key', keyId: other.keyId } },
    { grantId: g1.grantId, status: 'revoked', revokedReason: 'api_key_revoked', approvedBy: { kind: 'api_key', keyId } },
  ])

  t.equal((await admin('revoke-grant', '--account', a.accountId, '--grant', g2.grantId)).code, 0)
  t.equal((await mcpCall(g2.access)).status, 401)
  t.match(await token({ grant_type: 'refresh_token', refresh_token: g2.refresh, client_id: g2.client }), { status: 400, body: { error: 'invalid_grant' } })
  const after = JSON.parse((await admin('list-grants', '--account', a.accountId, '--json')).stdout).grants
  t.match(after, [
    { grantId: g2.grantId, status: 'revoked', revokedReason: 'revoked_by_admin' },
    { grantId: g1.grantId, status: 'revoked', revokedReason: 'api_key_revoked' },
  ])
  const stranger = await s.account('pro')
  t.equal((await admin('revoke-grant', '--account', stranger.accountId, '--grant', g2.grantId)).code, 1, "another account's grant is not found")
  t.same(JSON.parse((await admin('list-grants', '--account', stranger.accountId, '--json')).stdout).grants, [])
})

t.test('item 2: a code approved with a key that is revoked before it is redeemed gives no tokens', async (t) => {
  const a = await s.account('pro')
  const client = await register()
  const { verifier, challenge } = pkce()
  const code = (await approveWithKey(authorizeUrl(client, { code_challenge: challenge }), a.apiKey)).searchParams.get('code')!
  await s.services.accounts.revokeApiKey(a.accountId, a.apiKey.split('_')[1]!)
  t.match(await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client }), { status: 400, body: { error: 'invalid_grant' } })
})

t.test('item 3: no open redirect: errors before the person signed in and consented show the error page (RFC 9700 section 4.11.2)', async (t) => {
  const evil = await register({ redirect_uris: ['https://evil.example/cb'] })
  const { challenge } = pkce()
  const base = { redirect_uri: 'https://evil.example/cb', code_challenge: challenge }
  const attempts: [Record<string, string | undefined>, RegExp][] = [
    [{ response_type: 'token' }, /unsupported_response_type/],
    [{ response_type: undefined }, /unsupported_response_type/],
    [{ code_challenge: undefined }, /PKCE/],
    [{ code_challenge_method: 'plain' }, /S256/],
    [{ code_challenge: 'short' }, /code_challenge/],
    [{ scope: 'admin' }, /invalid_scope/],
    [{ resource: 'https://elsewhere.example/mcp' }, /invalid_target/],
  ]
  for (const [p, why] of attempts) {
    const r = await new Browser().get(authorizeUrl(evil, { ...base, ...p }))
    t.equal(r.status, 400, JSON.stringify(p))
    t.notOk(r.headers.get('location'), `no redirect to the registrant's site: ${JSON.stringify(p)}`)
    t.match(r.headers.get('content-type'), /text\/html/)
    const page = await r.text()
    t.match(page, why)
    t.notMatch(page, /evil\.example/, 'and no link to it either')
  }
  // The consent form posted with a broken request: the same.
  const posted = await new Browser().post(`${s.base}/oauth/authorize`, { response_type: 'token', client_id: evil, redirect_uri: 'https://evil.example/cb', code_challenge: challenge, code_challenge_method: 'S256', decision: 'deny' })
  t.equal(posted.status, 400)
  t.notOk(posted.headers.get('location'))

  // A valid request, denied by someone who never signed in: a page, not a redirect.
  const browser = new Browser()
  const page = await browser.get(authorizeUrl(evil, base))
  t.equal(page.status, 200)
  const denied = await browser.post(`${s.base}/oauth/authorize`, { ...hiddenFields(await page.text()), decision: 'deny' })
  t.equal(denied.status, 200)
  t.notOk(denied.headers.get('location'))
  t.match(await denied.text(), /You declined/)

  // Denied by a person who is signed in (here with the account's key, earlier in this browser): back to the client.
  const a = await s.account('pro')
  const legit = await register()
  const legitPage = await browser.get(authorizeUrl(legit, { code_challenge: challenge }))
  t.equal((await browser.post(`${s.base}/oauth/authorize`, { ...hiddenFields(await legitPage.text()), api_key: a.apiKey, decision: 'approve' })).status, 302)
  const again = await browser.get(authorizeUrl(evil, base))
  t.equal(again.status, 200, 'a client not approved yet shows the consent page')
  const signedInDeny = await browser.post(`${s.base}/oauth/authorize`, { ...hiddenFields(await again.text()), decision: 'deny' })
  t.equal(signedInDeny.status, 302)
  t.match(Object.fromEntries(new URL(signedInDeny.headers.get('location')!).searchParams), { error: 'access_denied', state: 'st-1' })
})

t.test('item 4: an access token works only at the resource it was issued for (RFC 8707 audience)', async (t) => {
  const a = await s.account('pro')
  const forMcp = await grantWith(a.apiKey, s.mcpUrl)
  const forStream = await grantWith(a.apiKey, `${s.base}/mcp/stream`)
  t.equal((await mcpCall(forMcp.access, s.mcpUrl)).status, 200)
  t.equal((await mcpCall(forStream.access, `${s.base}/mcp/stream`)).status, 200)
  for (const [tok, url, metadata] of [
    [forMcp.access, `${s.base}/mcp/stream`, `${s.base}/.well-known/oauth-protected-resource/mcp/stream`],
    [forStream.access, s.mcpUrl, `${s.mcpUrl}/.well-known/oauth-protected-resource`],
  ] as const) {
    const r = await mcpCall(tok, url)
    t.equal(r.status, 401, `a token for another resource is refused at ${url}`)
    const challenge = r.headers.get('www-authenticate')!
    t.match(challenge, /error="invalid_token"/)
    t.ok(challenge.includes(`resource_metadata="${metadata}"`), 'and pointed at this resource’s metadata')
  }
  // Each endpoint's metadata names itself: two resources, as the tokens are.
  t.equal((await (await fetch(`${s.mcpUrl}/.well-known/oauth-protected-resource`)).json()).resource, s.mcpUrl)
  t.equal((await (await fetch(`${s.base}/.well-known/oauth-protected-resource/mcp/stream`)).json()).resource, `${s.base}/mcp/stream`)
  // An API key is not audience-bound: it works at both.
  t.equal((await mcpCall(a.apiKey, s.mcpUrl)).status, 200)
  t.equal((await mcpCall(a.apiKey, `${s.base}/mcp/stream`)).status, 200)
})

t.test('item 7: loopback redirect URIs match any port; redirect_uri sent at authorize is required and equal at the token endpoint; the consent page says what the client may do', async (t) => {
  const a = await s.account('pro')
  const client = await register() // registered with http://127.0.0.1:43110/callback
  const ephemeral = 'http://127.0.0.1:51999/callback'

  // RFC 8252 section 7.3: the native app's port of the moment is accepted.
  const p1 = pkce()
  const page = await new Browser().get(authorizeUrl(client, { code_challenge: p1.challenge, redirect_uri: ephemeral }))
  t.equal(page.status, 200, 'another port of the registered loopback URI')
  const html = await page.text()
  t.match(html, /spend your monthly credits/)
  t.match(html, /import links as notes \(50 credits per started minute of audio\)/)
  t.match(html, /ask questions about notes \(10 credits per request\)/)
  t.match(html, /edit their transcripts<\/strong>: [^<]*find and replace text in transcripts/)
  t.match(html, /name speakers/)
  const writers = TOOLS.filter((x) => !x.readOnly).map((x) => x.name).sort()
  t.same(Object.keys(CONSENT_ACTIONS).sort(), writers, 'every tool that is not read-only is on the consent page')
  const back = await approveWithKey(authorizeUrl(client, { code_challenge: p1.challenge, redirect_uri: ephemeral }), a.apiKey)
  t.equal(`${back.origin}${back.pathname}`, ephemeral, 'the code goes to the port the app listens on')
  const code1 = back.searchParams.get('code')!
  const form1 = { grant_type: 'authorization_code', code: code1, code_verifier: p1.verifier, client_id: client }
  // RFC 6749 section 4.1.3: the authorization request carried redirect_uri, so the token request must, identically.
  t.match(await token(form1), { status: 400, body: { error: 'invalid_request', error_description: /redirect_uri is required/ } })
  t.match(await token({ ...form1, redirect_uri: redirectUri }), { status: 400, body: { error: 'invalid_grant' } }, 'the registered port is not the one used')
  t.equal((await token({ ...form1, redirect_uri: ephemeral })).status, 200)
  for (const other of ['http://127.0.0.1:51999/other', 'http://localhost:51999/callback', 'http://127.0.0.2:43110/callback', 'https://127.0.0.1:51999/callback']) {
    const r = await new Browser().get(authorizeUrl(client, { code_challenge: p1.challenge, redirect_uri: other }))
    t.equal(r.status, 400, `${other} is not the registered URI`)
    t.notOk(r.headers.get('location'))
  }

  // An authorization request without redirect_uri (one is registered): the token request may leave it out.
  const p2 = pkce()
  const code2 = (await approveWithKey(authorizeUrl(client, { code_challenge: p2.challenge, redirect_uri: undefined }), a.apiKey)).searchParams.get('code')!
  t.equal((await token({ grant_type: 'authorization_code', code: code2, code_verifier: p2.verifier, client_id: client })).status, 200)
})
