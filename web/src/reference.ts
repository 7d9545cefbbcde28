// The tables every page consults (GET /app/api/reference): prices before a paid action, templates,
// languages, and what an error code means with what to do next. Loaded once per page load; they
// come from the same modules as the REST contract and MCP, so the page never restates them.
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, type Advice, type Reference } from './api.ts'

let loaded: Reference | null = null
let loading: Promise<Reference> | null = null

export function loadReference(): Promise<Reference> {
  if (loaded) return Promise.resolve(loaded)
  loading ??= api<Reference>('GET', '/reference').then(
    (r) => (loaded = r),
    (err) => {
      loading = null
      throw err
    },
  )
  return loading
}

/** The tables, or null until they arrive (pages show their prices once they do). */
export function useReference(): Reference | null {
  const [ref, setRef] = useState<Reference | null>(loaded)
  useEffect(() => {
    if (!ref) loadReference().then(setRef, () => {})
  }, [])
  return ref
}

/** The price of an operation (`analysis`, `deliverable`, ...), from x-service-credits. */
export const priceOf = (ref: Reference | null, operation: string): number | null => ref?.prices.find((p) => p.operation === operation)?.credits ?? null

/** What a failed note's errorCode means and what to do next. */
export const failureAdvice = (ref: Reference | null, errorCode: string | null): Advice | null =>
  ref ? ((errorCode !== null ? ref.advice.noteFailures[errorCode] : undefined) ?? ref.advice.unknownFailure) : null

/** What a refused request means and what to do next (null for codes with nothing to add). */
export const refusalAdvice = (ref: Reference | null, err: unknown): Advice | null => (ref && err instanceof ApiError ? (ref.advice.refusals[err.code] ?? null) : null)

/** For a 402: how many credits are missing, when the answer says (`balance`, `required`). */
export function missingCredits(err: unknown): { required: number; balance: number; missing: number } | null {
  if (!(err instanceof ApiError) || err.status !== 402) return null
  const { balance, required } = err.extra
  if (typeof balance !== 'number' || typeof required !== 'number') return null
  return { required, balance, missing: Math.max(0, required - balance) }
}
