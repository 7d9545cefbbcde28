// A person who signs in to the dashboard, stream `person-<personId>`. A person belongs to one
// account and is known by an email; the person id is derived from the normalised email, so the
// stream itself keeps emails unique and a sign-in reads exactly one stream (like an API key).
// The password exists only as its scrypt hash (./password.ts). Changing it raises
// `credentialsVersion`, which ends every session opened before.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { uuidFromName } from '../ids.ts'
import { streamKind } from '../streams.ts'

export const personStream = streamKind('person')

export const normalizeEmail = (email: string) => email.trim().toLowerCase()

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/
export const isEmail = (email: string) => EMAIL.test(normalizeEmail(email))

/** The one person id an email can have. */
export const personIdFor = (email: string) => uuidFromName('notes-service/person', normalizeEmail(email))

export type PersonRegistered = DomainEvent<'PersonRegistered', { personId: string; accountId: string; email: string; name: string; passwordHash: string; at: string }>
export type PersonPasswordChanged = DomainEvent<'PersonPasswordChanged', { passwordHash: string; at: string }>
export type PersonEvent = PersonRegistered | PersonPasswordChanged

export type PersonCommand =
  | { type: 'RegisterPerson'; accountId: string; email: string; name: string; passwordHash: string; now: string }
  | { type: 'ChangePassword'; passwordHash: string; now: string }

export type PersonState =
  | { status: 'none' }
  | { status: 'active'; personId: string; accountId: string; email: string; name: string; passwordHash: string; credentialsVersion: number }

export const personDecider: Decider<PersonCommand, PersonEvent, PersonState> = {
  initialState: () => ({ status: 'none' }),
  evolve(s, e) {
    switch (e.type) {
      case 'PersonRegistered':
        return { status: 'active', personId: e.data.personId, accountId: e.data.accountId, email: e.data.email, name: e.data.name, passwordHash: e.data.passwordHash, credentialsVersion: 0 }
      case 'PersonPasswordChanged':
        return s.status === 'none' ? s : { ...s, passwordHash: e.data.passwordHash, credentialsVersion: s.credentialsVersion + 1 }
    }
  },
  decide(c, s) {
    switch (c.type) {
      case 'RegisterPerson': {
        if (!isEmail(c.email)) throw new DomainError('invalid_request', 'That is not an email address.')
        if (s.status !== 'none') throw new DomainError('conflict', 'A person with this email is already registered.')
        const email = normalizeEmail(c.email)
        return [{ type: 'PersonRegistered', data: { personId: personIdFor(email), accountId: c.accountId, email, name: c.name, passwordHash: c.passwordHash, at: c.now } }]
      }
      case 'ChangePassword':
        if (s.status === 'none') throw new DomainError('not_found', 'No person with this email.')
        return [{ type: 'PersonPasswordChanged', data: { passwordHash: c.passwordHash, at: c.now } }]
    }
  },
}
