// API keys, one stream each: `apikey-<keyId>`. The secret is shown once and stored only as its
// SHA-256 (the secret is 256 random bits, so a fast hash is as strong as a slow one). The key
// carries its own id, `nk_<keyId>_<secret>`, so a request is authenticated by reading exactly
// one stream: consistent at once after creation or revocation, from any process.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { streamKind } from '../streams.ts'

export const apiKeyStream = streamKind('apikey')

const KEY_FORMAT = /^nk_([0-9A-HJKMNP-TV-Z]{26})_([A-Za-z0-9_-]{43})$/

export interface ParsedApiKey {
  keyId: string
  secret: string
}

/** Null for anything that is not shaped like one of our keys (a JWT, a typo, an empty string). */
export function parseApiKey(token: string): ParsedApiKey | null {
  const m = KEY_FORMAT.exec(token)
  return m ? { keyId: m[1]!, secret: m[2]! } : null
}

export const formatApiKey = (keyId: string, secret: string) => `nk_${keyId}_${secret}`

/** What lists show instead of the key: enough to recognise it, useless to use it. */
export const displayPrefix = (keyId: string, secret: string) => `nk_${keyId.slice(0, 8)}…${secret.slice(-4)}`

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex')

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex')
  const b = Buffer.from(storedHash, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}

export type ApiKeyCreated = DomainEvent<
  'ApiKeyCreated',
  { keyId: string; accountId: string; name: string; prefix: string; secretHash: string; at: string }
>
export type ApiKeyRevoked = DomainEvent<'ApiKeyRevoked', { keyId: string; accountId: string; reason: string; at: string }>
export type ApiKeyEvent = ApiKeyCreated | ApiKeyRevoked

export type ApiKeyCommand =
  | { type: 'CreateApiKey'; keyId: string; accountId: string; name: string; prefix: string; secretHash: string; now: string }
  | { type: 'RevokeApiKey'; accountId: string; reason: string; now: string }

export type ApiKeyState =
  | { status: 'none' }
  | { status: 'active' | 'revoked'; keyId: string; accountId: string; name: string; prefix: string; secretHash: string }

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKeyEvent, ApiKeyState> = {
  initialState: () => ({ status: 'none' }),
  evolve(s, e) {
    switch (e.type) {
      case 'ApiKeyCreated':
        return { status: 'active', keyId: e.data.keyId, accountId: e.data.accountId, name: e.data.name, prefix: e.data.prefix, secretHash: e.data.secretHash }
      case 'ApiKeyRevoked':
        return s.status === 'none' ? s : { ...s, status: 'revoked' }
    }
  },
  decide(c, s) {
    switch (c.type) {
      case 'CreateApiKey': {
        if (s.status !== 'none') throw new DomainError('conflict', 'An API key with this id already exists.')
        const { type: _, now, ...data } = c
        return [{ type: 'ApiKeyCreated', data: { ...data, at: now } }]
      }
      case 'RevokeApiKey':
        // Someone else's key is reported exactly like a missing one.
        if (s.status === 'none' || s.accountId !== c.accountId) throw new DomainError('not_found', 'No such API key.')
        if (s.status === 'revoked') return []
        return [{ type: 'ApiKeyRevoked', data: { keyId: s.keyId, accountId: s.accountId, reason: c.reason, at: c.now } }]
    }
  },
}

// ---- last use ---------------------------------------------------------------------------------

/**
 * Stream `apikeyusage-<keyId>`: that a key was used, recorded at most once per key and interval
 * by each API process (commands/apiKeyUsage.ts), never once per request. Kept apart from the
 * key's own stream, which every authentication reads, so it never grows that stream. Appended
 * without an expected revision: nothing decides on it, only the key list shows it.
 */
export const apiKeyUsageStream = streamKind('apikeyusage')
export type ApiKeyUsed = DomainEvent<'ApiKeyUsed', { keyId: string; accountId: string; at: string }>
