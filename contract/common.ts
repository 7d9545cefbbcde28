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

/** Query strings carry numbers and booleans as text. */
export const intFromQuery = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,6}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
