// The one mapping from domain error codes to HTTP statuses, and the spec's error body.
import { DomainError, type ErrorCode } from '../domain/errors.ts'
import { EventStoreTimeoutError } from '../ports/eventStore.ts'
import { DocumentStoreUnavailableError } from '../ports/documentStore.ts'

const STATUS: Record<ErrorCode, number> = {
  invalid_audio_url: 400,
  invalid_query: 400,
  invalid_format: 400,
  invalid_language: 400,
  invalid_template: 400,
  invalid_request: 400,
  invalid_api_key: 401,
  insufficient_credits: 402,
  upgrade_required: 402,
  quota_exceeded: 402,
  tier_upgrade_required: 403,
  not_found: 404,
  no_transcript: 404,
  analysis_not_generated: 404,
  invalid_state: 409,
  note_not_ready: 409,
  same_language: 409,
  conflict: 409,
  file_too_large: 413,
  unsupported_media_type: 415,
  rate_limit_exceeded: 429,
  llm_invalid_json: 502,
  speaker_naming_failed: 502,
  chat_failed: 502,
  invalid_upload_signature: 403,
  upload_url_expired: 403,
  internal_error: 500,
  audio_unavailable: 409,
  consent_requires_app: 403,
  method_not_allowed: 405,
  headers_too_large: 431,
  request_timeout: 408,
  duration_limit_exceeded: 413,
  // Like the spec's `same_language` (409): the request is well formed and the language is one of
  // the six, but this note cannot be translated into it here, given its audio language and the
  // installed engine. Nothing in the request can be fixed; the operator can add an engine.
  translation_pair_unsupported: 409,
  not_signed_in: 401,
  invalid_credentials: 401,
  csrf_check_failed: 403,
  origin_not_allowed: 403,
  service_unavailable: 503,
}

export const statusOf = (code: ErrorCode): number => STATUS[code]

export const errorBody = (error: string, message: string, extra: Record<string, unknown> = {}) => ({ ...extra, error, message })

/**
 * A store that did not answer in time is unavailable for now: the spec's 503 with Retry-After,
 * not a 500 (commands map it themselves; this catches the reads that go to the event store).
 */
export function unavailable(err: unknown): DomainError | undefined {
  if (err instanceof EventStoreTimeoutError) return new DomainError('service_unavailable', 'The event store is not answering; retry shortly.', { retryAfter: 1 })
  if (err instanceof DocumentStoreUnavailableError) return new DomainError('service_unavailable', 'A data store is not answering; retry shortly.', { retryAfter: 1 })
  return undefined
}
