// The webhook workers' factory (registered in app/workers.ts).
import type { Services } from './services.ts'
import type { RunningWorker } from './workers.ts'
import { startWebhookWorkers } from '../workers/webhooks.ts'
import { safeWebhookTransport } from '../adapters/net/safeHttp.ts'
import { targetResolver } from '../commands/publicTarget.ts'

export function webhookWorker(s: Services): RunningWorker {
  const w = s.config.pipeline.webhooks
  return startWebhookWorkers({
    events: s.events,
    docs: s.docs,
    handler: s.handler,
    webhooks: s.webhooks,
    transport: safeWebhookTransport({ resolveTarget: targetResolver(s.ingest.resolver, w.allowlist), connectTimeoutMs: w.timeoutMs, idleTimeoutMs: w.timeoutMs, totalTimeoutMs: w.timeoutMs }),
    config: { retryDelaysMs: w.retryDelaysMs, timeoutMs: w.timeoutMs, pollMs: w.pollMs },
    log: (m) => console.error(m),
  })
}
