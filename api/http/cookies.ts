// The cookies of the dashboard and the OAuth consent page: parsed, signed and checked with
// @fastify/cookie (its Signer: `<value>.<HMAC-SHA256, base64>`, timing-safe comparison, and key
// rotation when given a list of secrets, the first signing); a cookie whose signature does not
// check reads as absent. Each surface signs with its own secret (DASHBOARD_SIGNING_SECRET,
// OAUTH_SIGNING_SECRET), so it holds a Signer of its own rather than the context's.
//
// Written by `setCookie` below, not by the plugin's `reply.setCookie`: the plugin serializes with
// cookie@2 `stringifySetCookie`, which puts Max-Age before Path, SameSite last and adds Expires
// when clearing; the service has always sent `Path; Max-Age; HttpOnly; SameSite; Secure`, and
// clients and the suite read it so. One writer, so each cookie is set once per response.
import type { FastifyReply } from 'fastify'
import fastifyCookie from '@fastify/cookie'

export { fastifyCookie }
export type CookieSigner = ReturnType<typeof fastifyCookie.signerFactory>

export const cookieSigner = (secret: string): CookieSigner => fastifyCookie.signerFactory(secret)

/** The value of a signed cookie, or undefined when it is missing or its signature does not check. */
export function unsignedCookie(signer: CookieSigner, raw: string | undefined): string | undefined {
  if (!raw) return undefined
  const r = signer.unsign(raw)
  return r.valid ? r.value : undefined
}

export interface CookieFlags {
  path: '/' | '/oauth'
  maxAgeSeconds: number
  sameSite: 'Lax' | 'Strict'
  secure: boolean
}

// fastify adds each `set-cookie` header to the ones already set (re-sending those sent a cookie twice).
export function setCookie(reply: FastifyReply, name: string, value: string, o: CookieFlags) {
  reply.header('set-cookie', `${name}=${encodeURIComponent(value)}; Path=${o.path}; Max-Age=${Math.max(0, Math.floor(o.maxAgeSeconds))}; HttpOnly; SameSite=${o.sameSite}${o.secure ? '; Secure' : ''}`)
}
