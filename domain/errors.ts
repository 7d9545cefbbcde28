// Typed domain errors. The codes are the spec's error codes (part 7); the edges (REST, MCP) map
// each code to its HTTP status in one place, so the domain never speaks HTTP.

export type ErrorCode =
  | 'invalid_audio_url'
  | 'invalid_query'
  | 'invalid_format'
  | 'invalid_language'
  | 'invalid_template'
  | 'invalid_request'
  | 'invalid_api_key'
  | 'insufficient_credits'
  | 'upgrade_required'
  | 'quota_exceeded'
  | 'tier_upgrade_required'
  | 'not_found'
  | 'no_transcript'
  | 'analysis_not_generated'
  | 'invalid_state'
  | 'note_not_ready'
  | 'same_language'
  | 'conflict'
  | 'file_too_large'
  | 'unsupported_media_type'
  | 'rate_limit_exceeded'
  | 'llm_invalid_json'
  | 'speaker_naming_failed'
  | 'chat_failed'
  // Extensions of the spec's codes (documented in docs/api.md, "Errors"):
  | 'invalid_upload_signature'
  | 'upload_url_expired'
  | 'internal_error'
  | 'audio_unavailable'
  | 'consent_requires_app'
  | 'method_not_allowed'
  | 'headers_too_large'
  | 'request_timeout'
  | 'duration_limit_exceeded'
  // docs/speech.md, "Translations": a pair the installed engine cannot translate, refused when requested.
  | 'translation_pair_unsupported'
  // The HTTP kit (docs/mcp-oauth.md, "Browser clients (CORS)" and "Health and load shedding"):
  | 'origin_not_allowed'
  | 'service_unavailable'
  // The web dashboard (docs/dashboard.md, "Web dashboard"):
  | 'not_signed_in'
  | 'invalid_credentials'
  | 'csrf_check_failed'

export class DomainError<Extra extends Record<string, unknown> = Record<string, unknown>> extends Error {
  override readonly name = 'DomainError'
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Extra = {} as Extra,
  ) {
    super(message)
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError
