// The dashboard's calls to /app/api: JSON in and out, the session's CSRF token on every change,
// and one error type carrying the service's `{ error, message, ...extra }`.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error body's other fields (`balance` and `required` of a 402, `retryAfter` of a 429, ...). */
    readonly extra: Record<string, unknown> = {},
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

const errorOf = (status: number, data: Record<string, unknown>) => {
  const { error, message, ...extra } = data
  const code = typeof error === 'string' ? error : 'error'
  if (status === 401 && code === 'not_signed_in') onSignedOut()
  return new ApiError(status, code, typeof message === 'string' ? message : `The service answered ${status}.`, extra)
}

/** A random id for an Idempotency-Key (crypto.randomUUID exists only on https and localhost). */
export function randomId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/**
 * `idempotencyKey`: one per user action, so a request the browser sends twice (a double click, a
 * retry after a lost answer) applies once: a second note, charge or deliverable is never made.
 */
export async function api<T>(method: Method, path: string, body?: unknown, o: { idempotencyKey?: string } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (o.idempotencyKey) headers['idempotency-key'] = o.idempotencyKey
  const res = await fetch(`/app/api${path}`, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
  const text = await res.text()
  let data: Record<string, unknown> = {}
  try {
    data = text ? (JSON.parse(text) as Record<string, unknown>) : {}
  } catch {
    // A proxy's HTML error page, a cut connection: say what came back.
    if (res.ok) throw new ApiError(res.status, 'invalid_response', 'The service answered something that is not JSON.')
  }
  if (!res.ok) throw errorOf(res.status, data)
  return data as T
}

/**
 * PUTs a file to a presigned upload URL with the headers it was signed for, reporting the bytes
 * sent as they go (fetch has no upload progress; XMLHttpRequest does). Rejects with the store's
 * error body when it refuses.
 */
export function putFile(url: string, headers: Record<string, string>, file: Blob, onProgress: (sent: number, total: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('PUT', url)
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v)
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size)
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(file.size, file.size)
        return resolve()
      }
      let data: Record<string, unknown> = {}
      try {
        data = JSON.parse(xhr.responseText) as Record<string, unknown>
      } catch {
        // An S3 store answers XML: its status says enough.
      }
      reject(errorOf(xhr.status, data))
    }
    xhr.onerror = () => reject(new ApiError(0, 'network_error', 'The upload was cut off (network error). Try again.'))
    xhr.send(file)
  })
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

export type NoteStatus = 'processing' | 'ready' | 'failed'

export interface Note {
  id: string
  title: string
  description: string | null
  status: NoteStatus
  errorCode: string | null
  /** What went wrong and what fixes it, when failed. */
  errorMessage: string | null
  origin: string
  sourceType: 'upload' | 'recording' | 'url'
  sourceUrl: string | null
  folderId: string | null
  tags: string[]
  durationSeconds: number | null
  language: string | null
  createdAt: string
  progress: Progress | null
  keepAudio: boolean
  audioDeletedAt: string | null
}

export interface NoteList {
  notes: Note[]
  nextCursor: string | null
  hasMore: boolean
}

export interface Analysis {
  template: string
  summary: string
  keyPoints: string[]
  actionItems: { text: string; assignee: string; deadline: string }[]
  decisions: string[]
  questions: string[]
  topics: string[]
  anchors: { keyPoints: (number | null)[]; actionItems: (number | null)[]; decisions: (number | null)[]; questions: (number | null)[] } | null
  sections: Record<'positions' | 'arguments' | 'quotes' | 'agreements' | 'disagreements', { text: string; speaker: string | null; t: number | null }[]> | null
  mindmap: string | null
  model: string
  updatedAt: string
}

export interface AnalysisList {
  noteId: string
  analyses: Analysis[]
  report?: { ok: string[]; failed: { template: string; error: string; message: string }[] }
}

export interface Chapter {
  startMs: number
  endMs: number
  headline: string
}

export interface Outline {
  noteId: string
  outline: Chapter[]
  attemptedAt: string | null
  generated: boolean
}

export interface NoteDetail extends Note {
  audio: { url: string; contentType: string; sizeBytes: number } | null
  aiNotes: Analysis[]
  outline: Chapter[]
}

export interface Folder {
  id: string
  name: string
  noteCount: number
}

export interface CreatedNote {
  noteId: string
  status: 'processing'
  upload?: { method: 'PUT'; url: string; expiresInSeconds: number; headers: Record<string, string> }
  next: string
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

export interface Speaker {
  label: string | null
  name: string | null
  /** `confirmed` by the person; anything else (`suggested`, matched by voice) is offered for acceptance. */
  nameStatus: 'confirmed' | 'suggested' | (string & {}) | null
  suggestedName: string | null
  suggestedNameConfidence: number | null
  speechSeconds: number | null
  segmentCount: number | null
  voiceExcluded: boolean
}

export interface Transcript {
  noteId: string
  language: string | null
  speakers: Speaker[]
  segments: Segment[]
  /** Present when the plan gets a preview only (free plan). */
  truncation?: { shownSegments: number; totalSegments: number; rule?: string; getTheRest?: string }
}

export interface ReplaceResult {
  occurrences: number
  changedSegments: { sequence: number; before: string; after: string }[]
  staleTranslations: { language: string; segments: number[] }[]
}

export interface TranslationState {
  language: string
  sourceLanguage: string | null
  status: 'none' | 'pending' | 'running' | 'ready' | 'failed'
  stale: boolean
  staleSegments: number[]
  progress: { translatedSegments: number; totalSegments: number; percent: number }
  errorCode: string | null
  message: string | null
  completedAt: string | null
  segments: { sequence: number; startMs: number; endMs: number; speakerLabel: string | null; text: string | null }[]
}

export interface Answer {
  question: string
  answer: string
  citedSegments: string[]
  sessionId: string
}

export interface Deliverable {
  id: string
  kind: 'email' | 'document' | 'slides'
  template: string
  locale: string
  title: string
  content: string
  createdAt: string
  fileName: string
  sizeBytes: number
}

export interface Advice {
  sentence: string
  next: string
}

export interface Reference {
  prices: { operation: string; endpoint: string; credits: number; per: string; note?: string }[]
  analysisTemplates: string[]
  deliverableTemplates: Record<string, string[]>
  deliverableLocales: string[]
  translationLanguages: { code: string; name: string }[]
  transcriptFormats: string[]
  advice: { noteFailures: Record<string, Advice>; unknownFailure: Advice; refusals: Record<string, Advice> }
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
