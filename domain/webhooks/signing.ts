// Standard Webhooks signatures (standardwebhooks.com): the signed content is
// `${webhook-id}.${webhook-timestamp}.${body}`, HMAC-SHA256 with the secret's bytes (the base64
// after `whsec_`), sent as `webhook-signature: v1,<base64>`; several space-separated signatures
// while a rotated secret is still valid. Receivers verify with any of them.
import { createHmac, timingSafeEqual } from 'node:crypto'

export const SECRET_PREFIX = 'whsec_'

const keyOf = (secret: string) => Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => sign(s, id, timestamp, body)).join(' ')
}

/** True when one of the header's `v1` signatures matches `secret` and the timestamp is within `toleranceSeconds` of `nowSeconds`. */
export function verify(secret: string, headers: { id: string; timestamp: string; signature: string }, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const ts = Number(headers.timestamp)
  if (!Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceSeconds) return false
  const expected = Buffer.from(sign(secret, headers.id, ts, body))
  return headers.signature.split(' ').some((sig) => {
    const given = Buffer.from(sig)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}
