// Outgoing webhook calls. The adapter checks the endpoint's address like import downloads (no
// private address unless allowlisted, connection pinned to the checked address) and follows no
// redirect.
export interface WebhookTryResult {
  /** The HTTP status, or null when no answer came (refused, timeout, blocked address). */
  statusCode: number | null
  error: string | null
  durationMs: number
  /** The first bytes of the answer's body (text), for the delivery log; null without an answer. */
  responseExcerpt?: string | null
}

export interface WebhookTransport {
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<WebhookTryResult>
}
