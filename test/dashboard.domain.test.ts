// The dashboard's rules as specifications: people (one per email, password only as a slow hash,
// a new password ends older sessions), sessions (stand until ended, expired or outdated), the
// OAuth approval that a revocation withdraws (deciders on the shared DeciderSpecification), and
// the statement's CSV.
import t from 'tap'
import { DeciderSpecification } from './support/decider.ts'
import { hashPassword, verifyPassword, checkPasswordPolicy, DECOY_PASSWORD_HASH } from '../domain/accounts/password.ts'
import { personDecider, personIdFor, type PersonEvent } from '../domain/accounts/person.ts'
import { formatSessionToken, hashSessionSecret, parseSessionToken, sessionDecider, sessionStands, type SessionEvent } from '../domain/accounts/session.ts'
import { consentCovers, oauthConsentDecider, type OAuthConsentEvent } from '../domain/oauth/consent.ts'
import { statementCsv } from '../readmodels/ledger.ts'

const now = '2026-03-01T10:00:00.000Z'
const person = DeciderSpecification.for(personDecider)
const session = DeciderSpecification.for(sessionDecider)
const consent = DeciderSpecification.for(oauthConsentDecider)

t.test('passwords: scrypt with its parameters in the stored string; a wrong one, a decoy or garbage never verify', async (t) => {
  const h = await hashPassword('correct horse battery staple')
  t.match(h, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
  t.not(await hashPassword('correct horse battery staple'), h, 'salted')
  t.ok(await verifyPassword('correct horse battery staple', h))
  t.notOk(await verifyPassword('correct horse battery stapler', h))
  t.notOk(await verifyPassword('anything', DECOY_PASSWORD_HASH))
  t.notOk(await verifyPassword('x', 'md5$abc'))
  t.throws(() => checkPasswordPolicy('short'), { code: 'invalid_request' })
  t.doesNotThrow(() => checkPasswordPolicy('ten chars!'))
})

t.test('people: one per email (case-insensitive); a password change raises the credentials version', async (t) => {
  const register = { type: 'RegisterPerson' as const, accountId: 'acc-1', email: ' Pat@Example.COM ', name: 'Pat', passwordHash: 'h1', now }
  const registered: PersonEvent = { type: 'PersonRegistered', data: { personId: personIdFor('pat@example.com'), accountId: 'acc-1', email: 'pat@example.com', name: 'Pat', passwordHash: 'h1', at: now } }
  person.given([]).when(register).then(t, [registered])
  t.equal(personIdFor('PAT@example.com'), personIdFor('pat@example.com'))
  person.given([registered]).when(register).thenThrows(t, 'conflict', /already registered/)
  person.given([]).when({ ...register, email: 'not an email' }).thenThrows(t, 'invalid_request')
  const change = { type: 'ChangePassword' as const, passwordHash: 'h2', now }
  const changed: PersonEvent = { type: 'PersonPasswordChanged', data: { passwordHash: 'h2', at: now } }
  person.given([registered]).when(change).then(t, [changed])
  t.match(person.given([registered, changed]).state(), { status: 'active', passwordHash: 'h2', credentialsVersion: 1 })
  person.given([]).when(change).thenThrows(t, 'not_found')
})

t.test('sessions: stand until signed out, expired, or the password changed', async (t) => {
  const sessionId = '11111111-2222-4333-8444-555555555555'
  const data = { sessionId, personId: 'p', accountId: 'a', secretHash: hashSessionSecret('s'.repeat(43)), credentialsVersion: 0, expiresAt: '2026-03-01T22:00:00.000Z', userAgent: null }
  const start = { type: 'StartSession' as const, ...data, now }
  const started: SessionEvent = { type: 'SessionStarted', data: { ...data, at: now } }
  session.given([]).when(start).then(t, [started])
  session.given([started]).when(start).thenThrows(t, 'conflict', /taken/)
  const s = session.given([started]).state()
  t.ok(sessionStands(s, '2026-03-01T21:59:59.000Z', 0))
  t.notOk(sessionStands(s, '2026-03-01T22:00:00.000Z', 0), 'expired at its expiry')
  t.notOk(sessionStands(s, now, 1), 'the password changed since')
  const end = { type: 'EndSession' as const, reason: 'signed_out' as const, now }
  const ended: SessionEvent = { type: 'SessionEnded', data: { reason: 'signed_out', at: now } }
  session.given([started]).when(end).then(t, [ended])
  t.notOk(sessionStands(session.given([started, ended]).state(), now, 0))
  session.given([started, ended]).when(end).thenNothingHappened(t, 'signing out twice changes nothing')
  session.given([]).when(end).thenNothingHappened(t, 'signing out of no session changes nothing')
  const token = formatSessionToken(sessionId, 's'.repeat(43))
  t.same(parseSessionToken(token), { sessionId, secret: 's'.repeat(43) })
  for (const bad of ['nk_01HZY2M8D4E5F6G7H8J9K0M1N2_' + 'x'.repeat(43), `${sessionId}.short`, '', undefined]) t.equal(parseSessionToken(bad), null, `not a session token: ${bad}`)
})

t.test('OAuth approvals: withdrawn by a revocation, so the next authorization asks again', async (t) => {
  const approved: OAuthConsentEvent = { type: 'OAuthConsentGiven', data: { accountId: 'a', clientId: 'c1', scope: 'mcp', at: now } }
  consent.given([]).when({ type: 'GiveConsent', accountId: 'a', clientId: 'c1', scope: 'mcp', now }).thenMatches(t, [approved])
  t.ok(consentCovers(consent.given([approved]).state(), 'c1', 'mcp'))
  const withdraw = (clientId: string) => ({ type: 'WithdrawConsent' as const, accountId: 'a', clientId, now })
  const withdrawn = consent.given([approved]).when(withdraw('c1'))
  withdrawn.thenMatches(t, [{ type: 'OAuthConsentWithdrawn', data: { clientId: 'c1' } }])
  t.notOk(consentCovers(consent.given([approved, ...withdrawn.events()]).state(), 'c1', 'mcp'))
  consent.given([approved]).when(withdraw('c2')).thenNothingHappened(t, 'nothing to withdraw for a client never approved')
})

t.test('the statement as CSV: RFC 4180 quoting, and no cell a spreadsheet would run as a formula', async (t) => {
  const csv = statementCsv([
    { id: 'e1', revision: 1, type: 'CreditsCharged', operation: 'analysis', noteId: 'n1', noteTitle: '=HYPERLINK("x")', reference: 'c1', delta: -5, balanceAfter: 95, at: now },
    { id: 'e2', revision: 2, type: 'CreditsRefunded', operation: 'analysis', noteId: null, noteTitle: null, reference: 'c1', delta: 5, balanceAfter: 100, at: now },
  ])
  t.equal(
    csv,
    'at,revision,type,operation,note_id,note_title,reference,delta,balance_after\r\n' +
      `${now},1,CreditsCharged,analysis,n1,"'=HYPERLINK(""x"")",c1,-5,95\r\n` +
      `${now},2,CreditsRefunded,analysis,,,c1,5,100\r\n`,
  )
})
