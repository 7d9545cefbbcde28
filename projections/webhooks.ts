// Webhook read models: `webhook_endpoints` (what GET /v1/webhooks lists and the dispatcher
// reads; never the secret) and `webhook_deliveries` (the delivery log, and the queue the
// delivery worker polls by `dueAt`). Guarded by stream revision.
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import { webhookStream, type WebhookEndpointEvent } from '../domain/webhooks/endpoint.ts'
import { deliveryStream, type WebhookDeliveryEvent } from '../domain/webhooks/delivery.ts'
import type { Projection } from './runner.ts'
import { replaceRead, updateRead } from './revisionGuard.ts'

export const WEBHOOK_ENDPOINTS = 'webhook_endpoints'
export const WEBHOOK_DELIVERIES = 'webhook_deliveries'

export interface WebhookEndpointDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  url: string
  eventTypes: string[]
  description: string | null
  deleted: boolean
  createdAt: string
  revision: number
}

export interface WebhookDeliveryDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  endpointId: string
  messageId: string
  eventType: string
  noteId: string | null
  status: 'pending' | 'delivered' | 'failed' | 'cancelled'
  attempts: number
  /** Every finished try, oldest first: the delivery log's retries and answers. */
  tries?: WebhookTry[]
  lastStatusCode: number | null
  lastError: string | null
  /** When the delivery worker should look at it (pending only). */
  dueAt: string | null
  createdAt: string
  updatedAt: string
  revision: number
}

export interface WebhookTry {
  attempt: number
  statusCode: number | null
  error: string | null
  durationMs: number
  outcome: 'delivered' | 'failed' | 'cancelled' | 'retry'
  responseExcerpt: string | null
  at: string
}

export const webhooksProjection: Projection = {
  name: 'webhooks',
  filter: { categories: ['webhook', 'webhookdelivery'] },
  collections: [WEBHOOK_ENDPOINTS, WEBHOOK_DELIVERIES],
  async setup(docs) {
    await docs.collection(WEBHOOK_ENDPOINTS).createIndex({ keys: { accountId: 1, createdAt: 1 }, name: 'by_account' })
    await docs.collection(WEBHOOK_DELIVERIES).createIndex({ keys: { status: 1, dueAt: 1 }, name: 'by_due' })
    await docs.collection(WEBHOOK_DELIVERIES).createIndex({ keys: { endpointId: 1, createdAt: -1 }, name: 'by_endpoint' })
  },
  async handle(events, docs) {
    for (const e of events) {
      if (deliveryStream.owns(e.streamName)) await applyDelivery(e, docs)
      else await applyEndpoint(e, docs)
    }
  },
}

async function applyEndpoint(r: RecordedEvent, docs: DocumentStore) {
  const c = docs.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
  const id = webhookStream.idOf(r.streamName)
  const e = toDomainEvent<WebhookEndpointEvent>(r)
  const doc = await c.findOne({ _id: id })
  if (doc && doc.revision >= r.revision) return
  if (e.type === 'WebhookEndpointCreated') {
    const d = e.data
    await replaceRead(c, doc, { _id: id, accountId: d.accountId, url: d.url, eventTypes: d.eventTypes, description: d.description, deleted: false, createdAt: d.at, revision: r.revision })
  } else if (doc) {
    await updateRead(c, doc, { $set: { revision: r.revision, ...(e.type === 'WebhookEndpointDeleted' ? { deleted: true } : {}) } })
  }
}

async function applyDelivery(r: RecordedEvent, docs: DocumentStore) {
  const c = docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
  const id = deliveryStream.idOf(r.streamName)
  const e = toDomainEvent<WebhookDeliveryEvent>(r)
  const doc = await c.findOne({ _id: id })
  if (doc && doc.revision >= r.revision) return
  const at = e.data.at
  switch (e.type) {
    case 'WebhookDeliveryScheduled': {
      const d = e.data
      await replaceRead(c, doc, {
        _id: id,
        accountId: d.accountId,
        endpointId: d.endpointId,
        messageId: d.messageId,
        eventType: d.eventType,
        noteId: d.noteId,
        status: 'pending',
        attempts: 0,
        lastStatusCode: null,
        lastError: null,
        dueAt: at,
        createdAt: at,
        updatedAt: at,
        revision: r.revision,
      })
      return
    }
    case 'WebhookDeliveryAttemptStarted':
      if (doc) await updateRead(c, doc, { $set: { attempts: e.data.attempt, dueAt: e.data.leaseUntil, updatedAt: at, revision: r.revision } })
      return
    case 'WebhookDeliveryAttempted': {
      if (!doc) return
      const status = e.data.outcome === 'retry' ? 'pending' : e.data.outcome
      const d = e.data
      const tried: WebhookTry = { attempt: d.attempt, statusCode: d.statusCode, error: d.error, durationMs: d.durationMs, outcome: d.outcome, responseExcerpt: d.responseExcerpt ?? null, at }
      await updateRead(c, doc, { $set: { status, lastStatusCode: d.statusCode, lastError: d.error, dueAt: d.nextAttemptAt, updatedAt: at, revision: r.revision, tries: [...(doc.tries ?? []), tried] } })
      return
    }
  }
}
