// The dashboard's rules as specifications: people (one per email, password only as a slow hash,
// a new password ends older sessions), sessions (stand until ended, expired or outdated), the
// OAuth approval that a revocation withdraws, and the statement's CSV.
import t from 'tap'
import { fold } from '../domain/decider.ts'
import { hashPassword, verifyPassword, checkPasswordPolicy, DECOY_PASSWORD_HASH } from '../domain/accounts/password.ts'
import { personDecider, personIdFor, type PersonEvent } from '../domain/accounts/person.ts'
import { formatSessionToken, hashSessionSecret, parseSessionToken, sessionDecider, sessionStands, type SessionEvent } from '../domain/accounts/session.ts'
import { consentCovers, oauthConsentDecider, type OAuthConsentEvent } from '../domain/oauth/consent.ts'
import { statementCsv } from '../readmodels/ledger.ts'

const now = '2026-03-01T10:00:00.000Z'
const person = (events: PersonEvent[]) => fold(personDecider, events)
const session = (events: SessionEvent[]) => fold(sessionDecider, events)

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
  const [registered] = personDecider.decide(register, person([]))
  t.match(registered, { type: 'PersonRegistered', data: { personId: personIdFor('pat@example.com'), accountId: 'acc-1', email: 'pat@example.com' } })
  t.equal(personIdFor('PAT@example.com'), personIdFor('pat@example.com'))
  t.throws(() => personDecider.decide(register, person([registered!])), { code: 'conflict' }, 'the email is taken')
  t.throws(() => personDecider.decide({ ...register, email: 'not an email' }, person([])), { code: 'invalid_request' })
  const changed = personDecider.decide({ type: 'ChangePassword', passwordHash: 'h2', now }, person([registered!]))
  t.match(person([registered!, ...changed]), { status: 'active', passwordHash: 'h2', credentialsVersion: 1 })
  t.throws(() => personDecider.decide({ type: 'ChangePassword', passwordHash: 'h2', now }, person([])), { code: 'not_found' })
})

t.test('sessions: stand until signed out, expired, or the password changed', async (t) => {
  const sessionId = '11111111-2222-4333-8444-555555555555'
  const [started] = sessionDecider.decide(
    { type: 'StartSession', sessionId, personId: 'p', accountId: 'a', secretHash: hashSessionSecret('s'.repeat(43)), credentialsVersion: 0, expiresAt: '2026-03-01T22:00:00.000Z', userAgent: null, now },
    session([]),
  )
  const s = session([started!])
  t.ok(sessionStands(s, '2026-03-01T21:59:59.000Z', 0))
  t.notOk(sessionStands(s, '2026-03-01T22:00:00.000Z', 0), 'expired at its expiry')
  t.notOk(sessionStands(s, now, 1), 'the password changed since')
  const ended = sessionDecider.decide({ type: 'EndSession', reason: 'signed_out', now }, s)
  t.match(ended, [{ type: 'SessionEnded', data: { reason: 'signed_out' } }])
  t.notOk(sessionStands(session([started!, ...ended]), now, 0))
  t.same(sessionDecider.decide({ type: 'EndSession', reason: 'signed_out', now }, session([started!, ...ended])), [], 'signing out twice changes nothing')
  const token = formatSessionToken(sessionId, 's'.repeat(43))
  t.same(parseSessionToken(token), { sessionId, secret: 's'.repeat(43) })
  for (const bad of ['nk_01HZY2M8D4E5F6G7H8J9K0M1N2_' + 'x'.repeat(43), `${sessionId}.short`, '', undefined]) t.equal(parseSessionToken(bad), null, `not a session token: ${bad}`)
})

t.test('OAuth approvals: withdrawn by a revocation, so the next authorization asks again', async (t) => {
  const given = oauthConsentDecider.decide({ type: 'GiveConsent', accountId: 'a', clientId: 'c1', scope: 'mcp', now }, fold(oauthConsentDecider, []))
  const s = fold(oauthConsentDecider, given as OAuthConsentEvent[])
  t.ok(consentCovers(s, 'c1', 'mcp'))
  const withdrawn = oauthConsentDecider.decide({ type: 'WithdrawConsent', accountId: 'a', clientId: 'c1', now }, s)
  t.match(withdrawn, [{ type: 'OAuthConsentWithdrawn', data: { clientId: 'c1' } }])
  t.notOk(consentCovers(fold(oauthConsentDecider, [...given, ...withdrawn]), 'c1', 'mcp'))
  t.same(oauthConsentDecider.decide({ type: 'WithdrawConsent', accountId: 'a', clientId: 'c2', now }, s), [], 'nothing to withdraw for a client never approved')
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
