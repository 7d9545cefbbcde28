// Branded ids: a NoteId cannot be passed where an AccountId is expected.
import { randomUUID, createHash } from 'node:crypto'

declare const brand: unique symbol
export type Brand<T, B extends string> = T & { readonly [brand]: B }

export type AccountId = Brand<string, 'AccountId'>
export type NoteId = Brand<string, 'NoteId'>
export type ChargeId = Brand<string, 'ChargeId'>
export type ReservationId = Brand<string, 'ReservationId'>
export type RequestId = Brand<string, 'RequestId'>

export const newId = <T extends Brand<string, string>>(): T => randomUUID() as T

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i
export const isUuid = (s: string): boolean => UUID.test(s)

/** A name-based UUID (version 5 layout over SHA-1), for ids that must be the same on every retry. */
export function uuidFromName(namespace: string, name: string): string {
  const h = createHash('sha1').update(namespace).update('\0').update(name).digest()
  h[6] = (h[6]! & 0x0f) | 0x50
  h[8] = (h[8]! & 0x3f) | 0x80
  const hex = h.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}
