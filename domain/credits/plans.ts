// Plans and their monthly credits (spec part 8). No overage, no carry-over.

export const PLANS = ['free', 'personal', 'pro', 'power', 'team'] as const
export type Plan = (typeof PLANS)[number]

export const MONTHLY_CREDITS: Readonly<Record<Plan, number>> = {
  free: 200,
  personal: 1000,
  pro: 5000,
  power: 25000,
  team: 5000,
}

export const isPlan = (s: string): s is Plan => (PLANS as readonly string[]).includes(s)

/** Credit cycles are calendar months in UTC: `YYYY-MM`. */
export type CycleId = string
export const cycleOf = (at: Date | string): CycleId => new Date(at).toISOString().slice(0, 7)

/** The REST API needs this plan or a higher one (spec part 5); MCP works on every plan. */
export const REST_MIN_PLAN: Plan = 'pro'
const RANK: Readonly<Record<Plan, number>> = { free: 0, personal: 1, pro: 2, team: 2, power: 3 }
export const planAtLeast = (plan: Plan, min: Plan): boolean => RANK[plan] >= RANK[min]

const MB = 1024 * 1024
const GB = 1024 * MB

/** What each plan may upload and keep (spec part 8 leaves the numbers to us; docs/api.md, "Limits", lists them). */
export interface PlanLimits {
  /** Largest single upload or import. */
  maxFileBytes: number
  /** Bytes of kept audio across the account's notes. */
  storageBytes: number
  /** Minutes of uploaded audio that may be finalized per monthly cycle. */
  monthlyMinutes: number
}

/**
 * The longest audio a note may have, per plan (seconds). Longer audio is refused before anything
 * is charged: an upload at finalize, an import as soon as its duration is known (its hold is
 * released). PLAN_MAX_DURATION_MINUTES overrides (app/config.ts).
 */
export const DEFAULT_MAX_DURATION_SECONDS: Readonly<Record<Plan, number>> = {
  free: 60 * 60,
  personal: 3 * 3600,
  pro: 5 * 3600,
  team: 5 * 3600,
  power: 10 * 3600,
}

/** The refusal of audio longer than the plan allows (the error's code and its words, both edges). */
export const durationLimitMessage = (plan: Plan, durationSeconds: number, maxSeconds: number) =>
  `The audio lasts ${Math.ceil(durationSeconds)} s; the ${plan} plan transcribes at most ${maxSeconds} s (${Math.round(maxSeconds / 60)} minutes) per note. Nothing was charged.`

export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: { maxFileBytes: 100 * MB, storageBytes: 1 * GB, monthlyMinutes: 60 },
  personal: { maxFileBytes: 500 * MB, storageBytes: 10 * GB, monthlyMinutes: 600 },
  pro: { maxFileBytes: 2 * GB, storageBytes: 50 * GB, monthlyMinutes: 3000 },
  team: { maxFileBytes: 2 * GB, storageBytes: 100 * GB, monthlyMinutes: 3000 },
  power: { maxFileBytes: 5 * GB, storageBytes: 250 * GB, monthlyMinutes: 12000 },
}
