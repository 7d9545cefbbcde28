// Schemas shared by every resource: the error body (spec part 7), ids and timestamps. These zod
// schemas are the contract: the REST routes validate with them, the MCP tools declare them, and
// the OpenAPI document is generated from them.
import { z } from 'zod'

export const Uuid = z.uuid()
export const DateTime = z.iso.datetime({ offset: true })

export const ErrorBody = z
  .looseObject({
    error: z.string().meta({ description: 'stable machine-readable code' }),
    message: z.string().optional().meta({ description: 'human-readable explanation' }),
  })
  .meta({ id: 'Error', description: 'Error body (spec part 7); extra fields depend on the code.' })
export type ErrorBody = z.infer<typeof ErrorBody>

/**
 * The `Idempotency-Key` request header (extension): names a request across the client's retries,
 * so a retried command applies once. Printable ASCII without spaces, 1 to 200 characters; the
 * REST authentication checks it with this schema and the OpenAPI document declares it.
 */
export const IdempotencyKey = z
  .string()
  .regex(/^[!-~]{1,200}$/, 'must be 1 to 200 printable ASCII characters without spaces')
  .meta({ description: 'Extension: names this request across your retries, so a retried request applies (and is charged) once. 1 to 200 printable ASCII characters, no spaces.' })

/**
 * An absolute http(s) link the service will call (an import, a webhook endpoint): `format: uri`
 * in the contract, parsed the way the server parses it (WHATWG URL), so what a client or a fuzzer
 * generates from the document and what the server takes agree. Whether its host resolves to a
 * public address is a property of the world, not of the text: that is checked when it is used
 * (400 with the reason).
 */
export const httpUrl = () => z.url({ protocol: /^https?$/, hostname: /./ }).max(2000)

/**
 * Text that must not be blank, trimmed: the limit counts what is sent and the pattern says
 * "not only spaces", so the contract states exactly what the server takes.
 */
export const nonBlank = (max: number) => z.string().max(max).regex(/\S/, 'must not be blank').trim()

/**
 * A whole number within [min, max] (or at least `min`). Every refusal says the whole rule: zod 4's
 * schema-level `error` replaces the message of each check too, so a range check reporting only
 * "must be a whole number" (or only one bound) would not tell the caller what to send.
 */
export function wholeNumber(min: number, max?: number) {
  const rule = max === undefined ? `must be a whole number of at least ${min}` : `must be a whole number from ${min} to ${max}`
  const n = z.number({ error: rule }).int().min(min)
  return max === undefined ? n : n.max(max)
}

/**
 * A whole number in a query string (which carries it as text): declared as the integer it is,
 * digits only (no sign, exponent or hex), within [min, max].
 */
export function intFromQuery(min: number, max: number): z.ZodType<number, unknown>
export function intFromQuery(min: number, max: number, byDefault: number): z.ZodType<number, unknown>
export function intFromQuery(min: number, max: number, byDefault?: number) {
  const n = wholeNumber(min, max)
  return z.preprocess((v) => (typeof v === 'string' && /^[0-9]{1,9}$/.test(v) ? Number(v) : v), byDefault === undefined ? n : n.default(byDefault))
}

/**
 * A comma-separated list in a query string (`origin=podcast,audio`): declared as an array
 * serialized `style: form, explode: false` (api/openapi.ts), parsed into the array.
 */
export const csvFromQuery = <T extends z.ZodType>(item: T, maxItems: number) =>
  z.preprocess((v) => (typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter(Boolean) : v), z.array(item).max(maxItems))
