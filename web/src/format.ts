// Display helpers: dates, durations, sizes, credits.
const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })
export const when = (iso: string | null | undefined) => (iso ? `${dateTime.format(new Date(iso))} UTC` : '—')

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never'
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000))
  if (s < 60) return 'just now'
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`
  return `${Math.floor(s / 86400)} days ago`
}

/**
 * The one rounding rule of the page: a position in the audio shows the whole seconds passed
 * (floor), as the [mm:ss] of an answer's citations and every player do; a note's length is its
 * `durationSeconds` (the service's whole seconds, what minutes are billed on), and the player
 * shows that same length, never one of its own.
 */
export function clock(ms: number): string {
  const t = Math.max(0, Math.floor(ms / 1000))
  const h = Math.floor(t / 3600)
  const m = Math.floor((t % 3600) / 60)
  const sec = String(t % 60).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`
}

export const duration = (seconds: number | null) => (seconds === null ? '—' : clock(seconds * 1000))

export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  let v = n
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v >= 10 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`
}

export const signed = (n: number) => (n > 0 ? `+${n}` : String(n))
export const number = (n: number) => n.toLocaleString('en-GB')

/** What a ledger event means to a person. */
export const LINE_KINDS: Record<string, { label: string; kind: 'grant' | 'charge' | 'reservation' | 'capture' | 'release' | 'refund' | 'plan' }> = {
  CreditCycleStarted: { label: 'Cycle started', kind: 'grant' },
  CreditPlanChanged: { label: 'Plan changed', kind: 'plan' },
  CreditsCharged: { label: 'Charge', kind: 'charge' },
  CreditsReserved: { label: 'Reservation', kind: 'reservation' },
  CreditsCaptured: { label: 'Reservation captured', kind: 'capture' },
  CreditsHoldExtended: { label: 'Reservation extended', kind: 'reservation' },
  CreditsReleased: { label: 'Reservation released', kind: 'release' },
  CreditsRefunded: { label: 'Refund', kind: 'refund' },
}
