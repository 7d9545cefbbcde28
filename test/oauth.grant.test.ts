// The OAuth grant, client and consent deciders: given events, when a command, then events or an
// error, on the shared DeciderSpecification. Pure: no store, no clock but the commands' `now`.
import t from 'tap'
import { oauthGrantDecider, accessTokenOwner, type OAuthGrantCommand, type OAuthGrantEvent } from '../domain/oauth/grant.ts'
import { oauthClientDecider, redirectUriMatches, redirectUriProblem, type ClientRegistration } from '../domain/oauth/client.ts'
import { oauthConsentDecider } from '../domain/oauth/consent.ts'
import { OAUTH_LIFETIMES, formatToken, hashTokenSecret, parseToken, s256, verifierMatches } from '../domain/oauth/tokens.ts'
import { DeciderSpecification } from './support/decider.ts'

const grantId = '6f1c2f8e-2b5a-4c1e-9a57-0f1d2c3b4a59'
const verifier = 'a'.repeat(20) + '-._~' + 'Z9'.repeat(12)
const T0 = '2026-03-01T10:00:00.000Z'
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString()
const H = 3600_000
const D = 24 * H

const grant = DeciderSpecification.for(oauthGrantDecider)
const client = DeciderSpecification.for(oauthClientDecider)
const consent = DeciderSpecification.for(oauthConsentDecider)
const state = (events: OAuthGrantEvent[]) => grant.given(events).state()

const approve: OAuthGrantCommand = {
  type: 'GrantAuthorization',
  grantId,
  clientId: 'client-1',
  accountId: 'acc-1',
  scope: 'mcp',
  resource: 'https://mcp.example.com',
  redirectUri: 'http://127.0.0.1:5000/cb',
  codeChallenge: s256(verifier),
  codeHash: hashTokenSecret('code-secret'),
  redirectUriGiven: true,
  approvedBy: { kind: 'api_key', keyId: '01K0000000000000000000000A' },
  now: T0,
}
const granted: OAuthGrantEvent = grant.given([]).when(approve).events()[0]!

const redeem = (over: Record<string, unknown> = {}) =>
  ({
    type: 'RedeemCode',
    clientId: 'client-1',
    codeHash: hashTokenSecret('code-secret'),
    codeVerifier: verifier,
    redirectUri: 'http://127.0.0.1:5000/cb',
    resource: null,
    accessTokenHash: hashTokenSecret('access-1'),
    refreshTokenHash: hashTokenSecret('refresh-1'),
    now: at(60_000),
    ...over,
  }) as OAuthGrantCommand

const refresh = (presented: string, next: string, now: string) =>
  ({ type: 'RefreshTokens', clientId: 'client-1', refreshTokenHash: hashTokenSecret(presented), accessTokenHash: hashTokenSecret(`a-${next}`), newRefreshTokenHash: hashTokenSecret(next), resource: null, now }) as OAuthGrantCommand

t.test('approval: the code lives 10 minutes, the grant 90 days', async (t) => {
  grant.given([]).when(approve).thenMatches(t, [{ type: 'OAuthAuthorizationGranted', data: { codeExpiresAt: at(OAUTH_LIFETIMES.codeSeconds * 1000), expiresAt: at(90 * D) } }])
})

t.test('redeeming the code with the right verifier issues a 1-hour access and a 30-day refresh token', async (t) => {
  grant.given([granted]).when(redeem()).thenMatches(t, [{ type: 'OAuthCodeRedeemed', data: { accessExpiresAt: at(60_000 + H), refreshExpiresAt: at(60_000 + 30 * D) } }])
})

t.test('PKCE: a wrong or malformed verifier is invalid_grant and leaves the code usable', async (t) => {
  const s = grant.given([granted])
  s.when(redeem({ codeVerifier: 'b'.repeat(43) })).thenThrows(t, 'invalid_grant')
  s.when(redeem({ codeVerifier: 'short' })).thenThrows(t, 'invalid_grant')
  s.when(redeem({ codeVerifier: s256(verifier) })).thenThrows(t, 'invalid_grant') // the challenge itself is not the verifier (no plain)
  s.when(redeem()).thenMatches(t, [{ type: 'OAuthCodeRedeemed' }])
  t.ok(verifierMatches(verifier, s256(verifier)))
  t.notOk(verifierMatches(verifier, verifier.slice(0, 43)), 'plain comparison never passes')
})

t.test('the code is refused when expired, for another client, another redirect_uri or another resource', async (t) => {
  const s = grant.given([granted])
  s.when(redeem({ now: at(10 * 60_000) })).thenThrows(t, 'invalid_grant')
  s.when(redeem({ clientId: 'client-2' })).thenThrows(t, 'invalid_grant')
  s.when(redeem({ redirectUri: 'http://127.0.0.1:5000/other' })).thenThrows(t, 'invalid_grant')
  // The authorization request carried redirect_uri: the token request must too (RFC 6749 section 4.1.3).
  s.when(redeem({ redirectUri: null })).thenThrows(t, 'invalid_request')
  s.when(redeem({ resource: 'https://elsewhere.example.com' })).thenThrows(t, 'invalid_target')
  s.when(redeem({ codeHash: hashTokenSecret('guess') })).thenThrows(t, 'invalid_grant')
  grant.given([]).when(redeem()).thenThrows(t, 'invalid_grant')
})

t.test('a token request may leave redirect_uri out only when the authorization request did', async (t) => {
  const withoutUri = { ...granted, data: { ...granted.data, redirectUriGiven: false } } as OAuthGrantEvent
  grant.given([withoutUri]).when(redeem({ redirectUri: null })).thenMatches(t, [{ type: 'OAuthCodeRedeemed' }])
  grant.given([withoutUri]).when(redeem({ redirectUri: 'http://127.0.0.1:5000/other' })).thenThrows(t, 'invalid_grant')
})

t.test('loopback redirect URIs match on any port, nothing else does (RFC 8252 section 7.3)', async (t) => {
  for (const [registered, presented] of [
    ['http://127.0.0.1:43110/callback', 'http://127.0.0.1:51234/callback'],
    ['http://127.0.0.1/callback', 'http://127.0.0.1:8080/callback'],
    ['http://[::1]:3000/cb', 'http://[::1]:61000/cb'],
    ['http://localhost:3000/cb?x=1', 'http://localhost:4000/cb?x=1'],
    ['https://app.example.com/cb', 'https://app.example.com/cb'],
  ]) t.ok(redirectUriMatches(registered!, presented!), `${registered} ~ ${presented}`)
  for (const [registered, presented] of [
    ['http://127.0.0.1:43110/callback', 'http://127.0.0.1:51234/other'],
    ['http://127.0.0.1:43110/callback', 'http://localhost:43110/callback'],
    ['http://127.0.0.1:43110/callback', 'https://127.0.0.1:43110/callback'],
    ['http://127.0.0.1:43110/callback', 'http://127.0.0.1:51234/callback?x=1'],
    ['http://127.0.0.1:43110/callback', 'http://127.0.0.1:51234/callback/../callback'],
    ['http://127.0.0.1:43110/callback', 'http://user@127.0.0.1:51234/callback'],
    ['http://127.0.0.1:43110/callback', 'http://127.0.0.2:43110/callback'],
    ['https://app.example.com/cb', 'https://app.example.com:8443/cb'],
    ['https://app.example.com/cb', 'https://app.example.com/cb/'],
    ['com.example.app:/oauth', 'com.example.app:/oauth2'],
  ]) t.notOk(redirectUriMatches(registered!, presented!), `${registered} !~ ${presented}`)
})

t.test('given a redeemed code, when it is presented again, then the grant is revoked', async (t) => {
  const redeemed = grant.given([granted]).when(redeem()).events()
  const reuse = grant.given([granted, ...redeemed]).when(redeem({ now: at(120_000) }))
  reuse.then(t, [{ type: 'OAuthGrantRevoked', data: { reason: 'code_reuse', at: at(120_000) } }])
  const after = [granted, ...redeemed, ...reuse.events()]
  t.equal(accessTokenOwner(state(after), hashTokenSecret('access-1'), at(120_000)), null, 'the access token it gave stops working')
  grant.given(after).when(refresh('refresh-1', 'refresh-2', at(130_000))).thenThrows(t, 'invalid_grant')
})

t.test('refresh rotates; presenting a rotated refresh token revokes the grant', async (t) => {
  const history = [granted, ...grant.given([granted]).when(redeem()).events()]
  const r1 = grant.given(history).when(refresh('refresh-1', 'refresh-2', at(2 * H)))
  r1.thenMatches(t, [{ type: 'OAuthTokensRefreshed', data: { refreshCount: 1, accessExpiresAt: at(3 * H), refreshExpiresAt: at(2 * H + 30 * D) } }])
  history.push(...r1.events())
  t.equal(accessTokenOwner(state(history), hashTokenSecret('access-1'), at(2 * H)), null, 'the old access token is replaced')
  t.ok(accessTokenOwner(state(history), hashTokenSecret('a-refresh-2'), at(2 * H)))
  const reuse = grant.given(history).when(refresh('refresh-1', 'refresh-3', at(3 * H)))
  reuse.then(t, [{ type: 'OAuthGrantRevoked', data: { reason: 'refresh_token_reuse', at: at(3 * H) } }])
  history.push(...reuse.events())
  grant.given(history).when(refresh('refresh-2', 'refresh-4', at(3 * H))).thenThrows(t, 'invalid_grant') // the current one dies with the grant
})

t.test('lifetimes: access 1 hour, refresh 30 days unused, never past 90 days from the approval', async (t) => {
  const history = [granted, ...grant.given([granted]).when(redeem()).events()]
  t.ok(accessTokenOwner(state(history), hashTokenSecret('access-1'), at(60_000 + H - 1)))
  t.equal(accessTokenOwner(state(history), hashTokenSecret('access-1'), at(60_000 + H)), null)
  grant.given(history).when(refresh('refresh-1', 'r2', at(60_000 + 30 * D))).thenThrows(t, 'invalid_grant') // unused for 30 days
  // Refreshing every 25 days keeps it alive, up to the hard expiry and not a moment beyond.
  let current = 'refresh-1'
  for (const day of [25, 50, 75]) {
    const next = `r-${day}`
    const refreshed = grant.given(history).when(refresh(current, next, at(day * D)))
    refreshed.thenMatches(t, [{ type: 'OAuthTokensRefreshed' }], `day ${day}`)
    history.push(...refreshed.events())
    current = next
  }
  const last = history[history.length - 1]!
  t.match(last.data, { refreshExpiresAt: at(90 * D) }, 'the last refresh token ends with the grant, not 30 days later')
  const nearEnd = grant.given(history).when(refresh(current, 'r-89', at(89.99 * D)))
  nearEnd.thenMatches(t, [{ data: { accessExpiresAt: at(90 * D) } }], 'an access token near the end is cut at the hard expiry')
  history.push(...nearEnd.events())
  grant.given(history).when(refresh('r-89', 'r-91', at(90 * D))).thenThrows(t, 'invalid_grant')
  t.equal(accessTokenOwner(state(history), hashTokenSecret('a-r-89'), at(90 * D)), null)
})

t.test('revocation is an event once, then nothing', async (t) => {
  const revoke = (ms: number): OAuthGrantCommand => ({ type: 'RevokeGrant', reason: 'revoked_by_client', now: at(ms) })
  const revoked = grant.given([granted]).when(revoke(1000))
  revoked.thenMatches(t, [{ type: 'OAuthGrantRevoked', data: { reason: 'revoked_by_client' } }])
  grant.given([granted, ...revoked.events()]).when(revoke(2000)).thenNothingHappened(t)
})

t.test('tokens carry their grant id; only the hash of their secret is kept', async (t) => {
  const token = formatToken('access', grantId, 'S'.repeat(43))
  t.same(parseToken('access', token), { grantId, secret: 'S'.repeat(43) })
  t.equal(parseToken('refresh', token), null, 'an access token is not a refresh token')
  t.equal(parseToken('access', 'nk_01HZZZZZZZZZZZZZZZZZZZZZZZ_' + 'a'.repeat(43)), null)
  t.equal(hashTokenSecret('x').length, 64)
})

t.test('client registration: redirect URIs are https, loopback http or a private-use scheme', async (t) => {
  t.equal(redirectUriProblem('https://app.example.com/cb'), null)
  t.equal(redirectUriProblem('http://127.0.0.1:33418/callback'), null)
  t.equal(redirectUriProblem('http://localhost/cb'), null)
  t.equal(redirectUriProblem('com.example.app:/oauth'), null)
  t.match(redirectUriProblem('http://evil.example.com/cb'), /loopback/)
  t.match(redirectUriProblem('javascript:alert(1)'), /not allowed/)
  t.match(redirectUriProblem('https://app.example.com/cb#frag'), /fragment/)
  t.match(redirectUriProblem('/relative'), /absolute/)
  const reg: ClientRegistration = {
    clientId: 'c',
    clientName: 'x',
    clientUri: null,
    redirectUris: ['https://app.example.com/cb'],
    grantTypes: ['authorization_code', 'refresh_token'],
    scope: 'mcp',
    tokenEndpointAuthMethod: 'none',
    clientSecretHash: null,
    softwareId: null,
    softwareVersion: null,
  }
  client.given([]).when({ type: 'RegisterClient', registration: reg, now: T0 }).thenMatches(t, [{ type: 'OAuthClientRegistered' }])
  client.given([]).when({ type: 'RegisterClient', registration: { ...reg, redirectUris: ['http://evil.example.com/cb'] }, now: T0 }).thenThrows(t, 'invalid_redirect_uri')
  // A confidential client needs its secret.
  client.given([]).when({ type: 'RegisterClient', registration: { ...reg, tokenEndpointAuthMethod: 'client_secret_basic' }, now: T0 }).thenThrows(t, 'invalid_client_metadata')
})

t.test('consent: once per client, widened but never narrowed', async (t) => {
  const give = (clientId: string) => ({ type: 'GiveConsent', accountId: 'a', clientId, scope: 'mcp', now: T0 }) as const
  const approved = consent.given([]).when(give('c'))
  approved.thenMatches(t, [{ type: 'OAuthConsentGiven', data: { clientId: 'c', scope: 'mcp' } }])
  consent.given(approved.events()).when(give('c')).thenNothingHappened(t, 'approved before: nothing new')
  consent.given(approved.events()).when(give('other')).thenMatches(t, [{ type: 'OAuthConsentGiven', data: { clientId: 'other' } }], 'another client asks anew')
})
