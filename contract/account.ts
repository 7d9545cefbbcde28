// The account's plan, credits and usage: what MCP founder_status returns and the REST extension
// GET /v1/account/status serves.
import { z } from 'zod'
import { DateTime, Uuid } from './common.ts'
import { PLANS } from '../domain/credits/plans.ts'

export const Plan = z.enum(PLANS)

export const AccountStatus = z
  .object({
    accountId: Uuid,
    plan: Plan,
    restApi: z.object({ available: z.boolean(), requiredPlan: Plan }).meta({ description: 'the REST API needs requiredPlan or higher; MCP works on every plan' }),
    credits: z
      .object({
        cycle: z.string().meta({ description: 'the monthly cycle, YYYY-MM (UTC)' }),
        monthly: z.number().int().meta({ description: 'credits the plan grants per cycle' }),
        left: z.number().int().meta({ description: 'credits left to spend in this cycle' }),
        reserved: z.number().int().meta({ description: 'credits held by imports whose final price is not known yet (not in left)' }),
        spent: z.number().int().meta({ description: 'credits spent in this cycle, refunds deducted' }),
        resetsAt: DateTime.meta({ description: 'when the next cycle starts; unused credits do not carry over' }),
      })
      .meta({ description: 'balance of the current monthly cycle' }),
    usage: z.object({
      byOperation: z
        .array(z.object({ operation: z.string(), count: z.number().int(), credits: z.number().int() }))
        .meta({ description: 'this cycle: operations started and the net credits they took (charges and holds, less refunds and releases)' }),
      notes: z.object({ total: z.number().int(), processing: z.number().int(), ready: z.number().int(), failed: z.number().int() }),
      uploadMinutes: z.object({ used: z.number().int(), quota: z.number().int() }).meta({ description: 'minutes of uploaded audio finalized this cycle, and the plan quota' }),
      storage: z.object({ usedBytes: z.number().int(), quotaBytes: z.number().int() }),
    }),
  })
  .meta({ id: 'AccountStatus' })
export type AccountStatus = z.infer<typeof AccountStatus>
