// Passwords of the people who sign in to the dashboard, stored only as a slow, salted hash
// (scrypt from node:crypto). The parameters travel inside the stored string, so they can be
// raised later without invalidating older hashes. CPU work only, no I/O.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { DomainError } from '../errors.ts'

export const PASSWORD_MIN_LENGTH = 10
export const PASSWORD_MAX_LENGTH = 200

/** N = 2^15, r = 8, p = 1: 32 MiB and roughly 50-100 ms per hash on one core. */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 }
const KEY_BYTES = 32

const derive = (password: string, salt: Buffer, o: { N: number; r: number; p: number }) =>
  new Promise<Buffer>((resolve, reject) => {
    const options: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: 256 * o.N * o.r }
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)))
  })

export function checkPasswordPolicy(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH) throw new DomainError('invalid_request', `A password needs at least ${PASSWORD_MIN_LENGTH} characters.`)
  if (password.length > PASSWORD_MAX_LENGTH) throw new DomainError('invalid_request', `A password has at most ${PASSWORD_MAX_LENGTH} characters.`)
}

/** `scrypt$<N>$<r>$<p>$<salt base64url>$<key base64url>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, PARAMS)
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key, ...rest] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !key || rest.length > 0) return false
  const o = { N: Number(n), r: Number(r), p: Number(p) }
  if (![o.N, o.r, o.p].every((x) => Number.isSafeInteger(x) && x > 0)) return false
  const expected = Buffer.from(key, 'base64url')
  const actual = await derive(password.slice(0, PASSWORD_MAX_LENGTH), Buffer.from(salt, 'base64url'), o)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

/** A hash of a password nobody knows: verified against when the email is unknown, so a wrong email costs the same time as a wrong password. */
export const DECOY_PASSWORD_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
