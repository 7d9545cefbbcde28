// OAuth protocol errors (RFC 6749 section 5.2, RFC 7591 section 3.2.2, RFC 8707). They are not the
// service's error codes: the authorization server answers them in the OAuth shape
// `{ error, error_description }` that OAuth clients parse.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'unsupported_token_type'

export class OAuthError extends Error {
  override readonly name = 'OAuthError'
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
  ) {
    super(message)
  }

  /** invalid_client is 401 (the client failed to authenticate); everything else is 400. */
  get status(): number {
    return this.code === 'invalid_client' ? 401 : 400
  }
}

export const isOAuthError = (e: unknown): e is OAuthError => e instanceof OAuthError
