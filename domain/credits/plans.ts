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
