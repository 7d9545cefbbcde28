// The dashboard's calls to /app/api: JSON in and out, the session's CSRF token on every change,
// and one error type carrying the service's `{ error, message }`.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

let csrfToken = ''
export const setCsrfToken = (t: string) => {
  csrfToken = t
}

/** Called when the session is gone (expired, signed out elsewhere): the app goes to the sign-in page. */
let onSignedOut: () => void = () => {}
export const whenSignedOut = (fn: () => void) => {
  onSignedOut = fn
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`/app/api${path}`, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
  const text = await res.text()
  const data = text ? (JSON.parse(text) as Record<string, unknown>) : {}
  if (!res.ok) {
    const code = typeof data.error === 'string' ? data.error : 'error'
    if (res.status === 401 && code === 'not_signed_in') onSignedOut()
    throw new ApiError(res.status, code, typeof data.message === 'string' ? data.message : `The service answered ${res.status}.`)
  }
  return data as T
}

export const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err))

// ---- shapes (the contract's, see contract/dashboard.ts) -----------------------------------------

export type Plan = 'free' | 'personal' | 'pro' | 'team' | 'power'

export interface Session {
  signedIn: true
  person: { personId: string; email: string; name: string }
  account: { accountId: string; name: string; plan: Plan }
  expiresAt: string
  csrfToken: string
}
export type SessionAnswer = Session | { signedIn: false; csrfToken: string }

export interface ApiKey {
  id: string
  name: string
  prefix: string
  status: 'active' | 'revoked'
  createdAt: string
  revokedAt: string | null
  lastUsedAt: string | null
}

export interface AccountStatus {
  accountId: string
  plan: Plan
  credits: { cycle: string; monthly: number; left: number; reserved: number; spent: number; resetsAt: string }
  usage: {
    byOperation: { operation: string; count: number; credits: number }[]
    notes: { total: number; processing: number; ready: number; failed: number }
    uploadMinutes: { used: number; quota: number }
    storage: { usedBytes: number; quotaBytes: number }
  }
}

export interface LedgerLine {
  id: string
  revision: number
  type: string
  operation: string | null
  noteId: string | null
  noteTitle: string | null
  reference: string | null
  delta: number
  balanceAfter: number
  at: string
}

export interface CreditsView {
  status: AccountStatus
  cycle: string
  cycles: string[]
  lines: LedgerLine[]
}

export interface AuditVerdict {
  ok: boolean
  balance: number
  lines: number
  problems: string[]
  auditedAt: string
}

export interface Progress {
  stage: string
  percent: number | null
  attempt: number
}

export interface Note {
  id: string
  title: string
  status: 'processing' | 'ready' | 'failed'
  errorCode: string | null
  /** What went wrong and what fixes it, when failed. */
  errorMessage: string | null
  origin: string
  sourceType: string
  durationSeconds: number | null
  language: string | null
  createdAt: string
  progress: Progress | null
}

export interface NoteDetail extends Note {
  audio: { url: string; contentType: string; sizeBytes: number } | null
}

export interface Segment {
  id: string
  sequence: number
  startMs: number
  endMs: number
  speakerLabel: string | null
  speakerName: string | null
  text: string
}

export interface Transcript {
  noteId: string
  language: string | null
  speakers: { label: string; name: string | null; nameStatus: 'confirmed' | 'suggested' | null; suggestedName: string | null; suggestedNameConfidence: number | null }[]
  segments: Segment[]
  /** Present when the plan gets a preview only (free plan). */
  truncation?: { shownSegments: number; totalSegments: number; rule?: string; getTheRest?: string }
}

export interface WebhookEndpoint {
  id: string
  url: string
  events: string[]
  description: string | null
  createdAt: string
}

export interface WebhookTry {
  attempt: number
  statusCode: number | null
  error: string | null
  durationMs: number
  outcome: string
  responseExcerpt: string | null
  at: string
}

export interface WebhookDelivery {
  id: string
  messageId: string
  eventType: string
  noteId: string | null
  status: 'pending' | 'delivered' | 'failed' | 'cancelled'
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: string | null
  tries: WebhookTry[]
  createdAt: string
}

export interface ConsentText {
  version: string
  title: string
  paragraphs: string[]
}

export interface VoiceProfile {
  id: string
  name: string
  voiceSeconds: number
  hasVoiceprint: boolean
  voiceExcluded: boolean
}

export interface VoiceScreen {
  consent: { status: 'granted' | 'revoked' | 'never' | 'outdated'; grantedAt: string | null; revokedAt: string | null }
  profiles: VoiceProfile[]
  voiceMatching: { available: boolean; reason: string | null }
  consentText: ConsentText
  grantedVersion: string | null
  grantedText: ConsentText | null
}

export interface AuthorizedClient {
  clientId: string
  clientName: string | null
  clientUri: string | null
  scope: string
  approvedAt: string | null
  activeGrants: number
  lastTokenAt: string | null
  expiresAt: string | null
}
