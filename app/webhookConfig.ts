// Configuration of the webhook sender, from environment variables (docs/webhooks.md: "Webhooks").
import { allowlist, envList, envNumber } from './pipelineConfig.ts'

export interface WebhookConfig {
  /** WEBHOOK_RETRY_DELAYS_SECONDS (comma separated): the delay before each retry, whose count is the number of retries after the first try. */
  retryDelaysMs: number[]
  /** WEBHOOK_TIMEOUT_MS: how long an endpoint has to answer a call. */
  timeoutMs: number
  /** WEBHOOK_POLL_MS: how often the sender looks for due deliveries. */
  pollMs: number
  /** WEBHOOK_ALLOW_HOSTS: non-public hosts, IPs or CIDRs endpoints may be at (self-hosting, tests). */
  allowlist: string[]
  /** WEBHOOK_ROTATION_GRACE_SECONDS: how long the previous secret keeps signing after a rotation. */
  rotationGraceMs: number
  /** WEBHOOK_SECRET_KEY: seals the signing secrets in the events; unset: a key generated into the data directory. */
  secretKey: string | null
}

export const DEFAULT_WEBHOOK_RETRY_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000]

export function loadWebhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
  const retry = envList(env.WEBHOOK_RETRY_DELAYS_SECONDS).map(Number)
  if (retry.some((n) => !Number.isFinite(n) || n < 0)) throw new Error('WEBHOOK_RETRY_DELAYS_SECONDS must be comma-separated non-negative numbers')
  return {
    retryDelaysMs: (retry.length > 0 ? retry : DEFAULT_WEBHOOK_RETRY_SECONDS).map((s) => Math.round(s * 1000)),
    timeoutMs: envNumber(env, 'WEBHOOK_TIMEOUT_MS', 15_000),
    pollMs: envNumber(env, 'WEBHOOK_POLL_MS', 1000) || 1,
    allowlist: allowlist(env.WEBHOOK_ALLOW_HOSTS),
    rotationGraceMs: envNumber(env, 'WEBHOOK_ROTATION_GRACE_SECONDS', 24 * 3600) * 1000,
    secretKey: env.WEBHOOK_SECRET_KEY || null,
  }
}
