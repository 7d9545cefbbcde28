// Queries over the webhook read models: an account's endpoints (never a secret) and the delivery
// log of one endpoint, as the API shows them.
import type { DocumentStore } from '../ports/documentStore.ts'
import { WEBHOOK_DELIVERIES, WEBHOOK_ENDPOINTS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from '../projections/webhooks.ts'
import type { WebhookDelivery, WebhookEndpoint } from '../contract/webhooks.ts'

const toEndpoint = (d: WebhookEndpointDoc): WebhookEndpoint => ({ id: d._id, url: d.url, events: d.eventTypes as WebhookEndpoint['events'], description: d.description, createdAt: d.createdAt })

/** The account's endpoints not deleted, oldest first. */
export async function webhookEndpoints(docs: DocumentStore, accountId: string): Promise<WebhookEndpoint[]> {
  const found = await docs.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS).find({ accountId, deleted: false }, { sort: { createdAt: 1 } })
  return found.map(toEndpoint)
}

/**
 * The last 100 deliveries to an endpoint, newest first; null when the endpoint is not the caller's
 * or was deleted (a deleted endpoint is gone for every route under it, as a client expects).
 */
export async function webhookDeliveries(docs: DocumentStore, accountId: string, endpointId: string): Promise<WebhookDelivery[] | null> {
  const ep = await docs.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS).findOne({ _id: endpointId, accountId, deleted: false })
  if (!ep) return null
  const list = await docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).find({ endpointId }, { sort: { createdAt: -1 }, limit: 100 })
  return list.map((x) => ({
    id: x._id,
    messageId: x.messageId,
    eventType: x.eventType as WebhookDelivery['eventType'],
    noteId: x.noteId,
    status: x.status,
    attempts: x.attempts,
    lastStatusCode: x.lastStatusCode,
    lastError: x.lastError,
    nextAttemptAt: x.status === 'pending' ? x.dueAt : null,
    tries: x.tries ?? [],
    createdAt: x.createdAt,
    updatedAt: x.updatedAt,
  }))
}
