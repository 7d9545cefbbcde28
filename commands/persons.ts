// People who sign in to the dashboard: registering one for an account (the admin command, the
// demo seed), setting a password, signing in and out, and checking a session cookie. Sessions
// are server-side (one stream each, domain/accounts/session.ts); the browser holds only a
// random token whose SHA-256 the stream keeps. API keys never sign in here, and a session is
// never an API key: the two credentials are checked by different code on different routes.
import { randomBytes, randomUUID } from 'node:crypto'
import { DomainError } from '../domain/errors.ts'
import { DECOY_PASSWORD_HASH, checkPasswordPolicy, hashPassword, verifyPassword } from '../domain/accounts/password.ts'
import { isEmail, normalizeEmail, personDecider, personIdFor, personStream, type PersonState } from '../domain/accounts/person.ts'
import { accountDecider, accountStream } from '../domain/accounts/account.ts'
import {
  formatSessionToken,
  hashSessionSecret,
  parseSessionToken,
  sessionDecider,
  sessionSecretMatches,
  sessionStands,
  sessionStream,
} from '../domain/accounts/session.ts'
import type { Plan } from '../domain/credits/plans.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'

export interface PersonView {
  personId: string
  accountId: string
  email: string
  name: string
}

export interface SignedIn extends PersonView {
  sessionId: string
  /** The cookie value: shown to the browser only, never stored. */
  token: string
  expiresAt: string
}

export interface DashboardAuth extends PersonView {
  sessionId: string
  expiresAt: string
  plan: Plan
  accountName: string
}

/** How long a session check is reused within this process (a sign-out here takes effect at once). */
const SESSION_CACHE_MS = 1000

export class PersonCommands {
  private readonly cache = new Map<string, { until: number; auth: DashboardAuth }>()

  constructor(
    private readonly handler: CommandHandler,
    private readonly credits: CreditCommands,
    private readonly config: { sessionSeconds: number },
    private readonly clock: () => Date = () => new Date(),
  ) {}

  private now = () => this.clock().toISOString()

  private async person(email: string): Promise<PersonState> {
    if (!isEmail(email)) return { status: 'none' }
    return (await this.handler.load(personStream.of(personIdFor(email)), personDecider)).state
  }

  /** A person who signs in to `accountId` with this email and password. */
  async register(o: { accountId: string; email: string; password: string; name?: string }): Promise<PersonView> {
    const { state: account } = await this.handler.load(accountStream.of(o.accountId), accountDecider)
    if (!account.opened) throw new DomainError('not_found', 'No such account.')
    if (!isEmail(o.email)) throw new DomainError('invalid_request', 'That is not an email address.')
    checkPasswordPolicy(o.password)
    const email = normalizeEmail(o.email)
    const personId = personIdFor(email)
    const name = o.name?.trim() || email.split('@')[0]!
    const r = await this.handler.handle(personStream.of(personId), { type: 'RegisterPerson', accountId: o.accountId, email, name, passwordHash: await hashPassword(o.password), now: this.now() }, personDecider)
    if (r.state.status !== 'active') throw new Error('person not registered')
    return { personId, accountId: o.accountId, email, name: r.state.name }
  }

  /** Sets a new password; every session opened with the old one ends. */
  async setPassword(email: string, password: string): Promise<PersonView> {
    checkPasswordPolicy(password)
    if (!isEmail(email)) throw new DomainError('invalid_request', 'That is not an email address.')
    const r = await this.handler.handle(personStream.of(personIdFor(email)), { type: 'ChangePassword', passwordHash: await hashPassword(password), now: this.now() }, personDecider)
    if (r.state.status !== 'active') throw new DomainError('not_found', 'No person with this email.')
    this.cache.clear()
    return { personId: r.state.personId, accountId: r.state.accountId, email: r.state.email, name: r.state.name }
  }

  async findPerson(email: string): Promise<PersonView | null> {
    const p = await this.person(email)
    return p.status === 'active' ? { personId: p.personId, accountId: p.accountId, email: p.email, name: p.name } : null
  }

  /** Null for a wrong email or password (the same answer, in about the same time). */
  async signIn(email: string, password: string, meta: { userAgent?: string | null } = {}): Promise<SignedIn | null> {
    const p = await this.person(email)
    const ok = await verifyPassword(password, p.status === 'active' ? p.passwordHash : DECOY_PASSWORD_HASH)
    if (!ok || p.status !== 'active') return null
    const sessionId = randomUUID()
    const secret = randomBytes(32).toString('base64url')
    const expiresAt = new Date(this.clock().getTime() + this.config.sessionSeconds * 1000).toISOString()
    await this.handler.handle(
      sessionStream.of(sessionId),
      {
        type: 'StartSession',
        sessionId,
        personId: p.personId,
        accountId: p.accountId,
        secretHash: hashSessionSecret(secret),
        credentialsVersion: p.credentialsVersion,
        expiresAt,
        userAgent: meta.userAgent?.slice(0, 300) ?? null,
        now: this.now(),
      },
      sessionDecider,
    )
    return { personId: p.personId, accountId: p.accountId, email: p.email, name: p.name, sessionId, token: formatSessionToken(sessionId, secret), expiresAt }
  }

  /** The signed-in person behind a session cookie, or null (malformed, unknown, ended, expired, password changed, account gone). */
  async authenticate(token: string | undefined): Promise<DashboardAuth | null> {
    const parsed = parseSessionToken(token)
    if (!parsed) return null
    const nowMs = Date.now()
    const cached = this.cache.get(token!)
    if (cached && cached.until > nowMs && Date.parse(cached.auth.expiresAt) > this.clock().getTime()) return cached.auth
    this.cache.delete(token!)
    const { state: s } = await this.handler.load(sessionStream.of(parsed.sessionId), sessionDecider)
    if (s.status !== 'active' || !sessionSecretMatches(parsed.secret, s.secretHash)) return null
    const { state: p } = await this.handler.load(personStream.of(s.personId), personDecider)
    if (p.status !== 'active' || p.accountId !== s.accountId || !sessionStands(s, this.now(), p.credentialsVersion)) return null
    const [{ state: ledger }, { state: account }] = await Promise.all([this.credits.state(s.accountId), this.handler.load(accountStream.of(s.accountId), accountDecider)])
    if (!ledger.opened || !account.opened) return null
    const auth: DashboardAuth = { personId: p.personId, accountId: p.accountId, email: p.email, name: p.name, sessionId: s.sessionId, expiresAt: s.expiresAt, plan: ledger.plan, accountName: account.name }
    this.cache.set(token!, { until: nowMs + SESSION_CACHE_MS, auth })
    if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value!)
    return auth
  }

  async signOut(token: string | undefined): Promise<void> {
    const parsed = parseSessionToken(token)
    if (!parsed) return
    const { state } = await this.handler.load(sessionStream.of(parsed.sessionId), sessionDecider)
    // Only the holder of the secret can end a session.
    if (state.status !== 'active' || !sessionSecretMatches(parsed.secret, state.secretHash)) return
    await this.handler.handle(sessionStream.of(parsed.sessionId), { type: 'EndSession', reason: 'signed_out', now: this.now() }, sessionDecider)
    this.cache.delete(token!)
  }
}
