// A dashboard session, stream `dashsession-<sessionId>`: a person signed in from one browser.
// Server-side: the browser holds `<sessionId>.<secret>` in an HttpOnly cookie, the stream holds
// the SHA-256 of the secret, the expiry and the person's credentials version at sign-in. A
// session stands while it is not ended, not expired, and the person's password has not changed
// since. Sign-in and sign-out are events, so they stay in the account's history.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { streamKind } from '../streams.ts'

export const sessionStream = streamKind('dashsession')

export const SESSION_END_REASONS = ['signed_out'] as const
export type SessionEndReason = (typeof SESSION_END_REASONS)[number]

const TOKEN = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/

export const formatSessionToken = (sessionId: string, secret: string) => `${sessionId}.${secret}`
export function parseSessionToken(token: string | undefined): { sessionId: string; secret: string } | null {
  const m = TOKEN.exec(token ?? '')
  return m ? { sessionId: m[1]!, secret: m[2]! } : null
}
export const hashSessionSecret = (secret: string) => createHash('sha256').update(secret).digest('hex')
export function sessionSecretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSessionSecret(secret), 'hex')
  const b = Buffer.from(storedHash, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}

export type SessionStarted = DomainEvent<
  'SessionStarted',
  { sessionId: string; personId: string; accountId: string; secretHash: string; credentialsVersion: number; expiresAt: string; userAgent: string | null; at: string }
>
export type SessionEnded = DomainEvent<'SessionEnded', { reason: SessionEndReason; at: string }>
export type SessionEvent = SessionStarted | SessionEnded

export type SessionCommand =
  | ({ type: 'StartSession'; now: string } & Omit<SessionStarted['data'], 'at'>)
  | { type: 'EndSession'; reason: SessionEndReason; now: string }

export type SessionState =
  | { status: 'none' }
  | { status: 'active' | 'ended'; sessionId: string; personId: string; accountId: string; secretHash: string; credentialsVersion: number; expiresAt: string; startedAt: string }

/** Whether a session stands at `now` for a person whose credentials are at `credentialsVersion`. */
export const sessionStands = (s: SessionState, now: string, credentialsVersion: number): boolean =>
  s.status === 'active' && Date.parse(now) < Date.parse(s.expiresAt) && s.credentialsVersion === credentialsVersion

export const sessionDecider: Decider<SessionCommand, SessionEvent, SessionState> = {
  initialState: () => ({ status: 'none' }),
  evolve(s, e) {
    switch (e.type) {
      case 'SessionStarted': {
        const { at, userAgent: _, ...d } = e.data
        return { status: 'active', ...d, startedAt: at }
      }
      case 'SessionEnded':
        return s.status === 'none' ? s : { ...s, status: 'ended' }
    }
  },
  decide(c, s) {
    switch (c.type) {
      case 'StartSession': {
        if (s.status !== 'none') throw new DomainError('conflict', 'This session id is taken.')
        const { type: _, now, ...data } = c
        return [{ type: 'SessionStarted', data: { ...data, at: now } }]
      }
      case 'EndSession':
        // Signing out twice, or out of an expired session, is not an error.
        if (s.status !== 'active') return []
        return [{ type: 'SessionEnded', data: { reason: c.reason, at: c.now } }]
    }
  },
}
