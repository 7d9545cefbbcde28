// Webhook endpoints (extension: the spec's part 6 leaves the management to a dashboard; until it
// exists these routes manage them) and the payload the service POSTs.
import { z } from 'zod'
import { DateTime, Uuid, httpUrl } from './common.ts'
import { Speaker } from './transcripts.ts'
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT } from '../domain/webhooks/endpoint.ts'

export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES)
/** What a delivery can carry: the subscribable events, and the test event. */
export const DeliveredEventType = z.enum([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT])

export const CreateWebhookRequest = z
  .object({
    url: httpUrl().meta({ description: 'https (or http) URL that receives the POSTs: no credentials in it, and its host must resolve to public addresses (or be allowlisted by the operator)' }),
    events: z.array(WebhookEventType).min(1).max(WEBHOOK_EVENT_TYPES.length).optional().meta({ description: 'default: every event type' }),
    description: z.string().max(500).optional(),
  })
  .meta({ id: 'CreateWebhookRequest' })
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>

export const WebhookEndpoint = z
  .object({
    id: Uuid,
    url: z.string(),
    events: z.array(WebhookEventType),
    description: z.string().nullable(),
    createdAt: DateTime,
  })
  .meta({ id: 'WebhookEndpoint' })
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>

export const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: z.string().meta({ description: 'whsec_…: shown once; signs every call (Standard Webhooks)' }),
}).meta({ id: 'WebhookEndpointWithSecret' })

export const WebhookList = z.object({ webhooks: z.array(WebhookEndpoint) }).meta({ id: 'WebhookList' })
export const WebhookIdParams = z.object({ id: Uuid })

export const RotatedSecret = z
  .object({ id: Uuid, secret: z.string(), previousSecretExpiresAt: DateTime.meta({ description: 'until then calls carry signatures with both secrets' }) })
  .meta({ id: 'RotatedWebhookSecret' })

export const WebhookTry = z
  .object({
    attempt: z.number().int(),
    statusCode: z.number().int().nullable().meta({ description: 'the endpoint’s HTTP status; null when no answer came' }),
    error: z.string().nullable(),
    durationMs: z.number().int(),
    outcome: z.enum(['delivered', 'failed', 'cancelled', 'retry']),
    responseExcerpt: z.string().nullable().meta({ description: 'the first 500 bytes of the answer’s body' }),
    at: DateTime,
  })
  .meta({ id: 'WebhookTry' })

export const WebhookDelivery = z
  .object({
    id: Uuid,
    messageId: z.string().meta({ description: 'the webhook-id header: the same on every try' }),
    eventType: DeliveredEventType,
    noteId: Uuid.nullable().meta({ description: 'null for a test event' }),
    status: z.enum(['pending', 'delivered', 'failed', 'cancelled']),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: DateTime.nullable(),
    tries: z.array(WebhookTry).meta({ description: 'every finished try, oldest first' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .meta({ id: 'WebhookDelivery' })
export type WebhookDelivery = z.infer<typeof WebhookDelivery>

export const WebhookTestQueued = z
  .object({ id: Uuid.meta({ description: 'the delivery: it shows in the delivery log' }), messageId: z.string(), eventType: z.literal(WEBHOOK_TEST_EVENT) })
  .meta({ id: 'WebhookTestQueued' })

/** The body of a test event (`type` = `webhook.test`). */
export const WebhookTestPayload = z
  .object({
    type: z.literal(WEBHOOK_TEST_EVENT),
    timestamp: DateTime,
    data: z.object({ endpointId: Uuid, message: z.string() }),
  })
  .meta({ id: 'WebhookTestPayload' })
export type WebhookTestPayload = z.infer<typeof WebhookTestPayload>
export const WebhookDeliveryList = z.object({ deliveries: z.array(WebhookDelivery) }).meta({ id: 'WebhookDeliveryList' })

/** What each POST carries (Standard Webhooks: `type`, `timestamp`, `data`). */
export const WebhookPayload = z
  .object({
    type: WebhookEventType,
    timestamp: DateTime.meta({ description: 'when the event happened' }),
    data: z.object({
      noteId: Uuid,
      status: z.enum(['ready', 'failed']),
      errorCode: z.string().nullable(),
      errorMessage: z.string().nullable().meta({ description: 'Extension: what went wrong and what fixes it, in words; null for note.ready' }),
      title: z.string(),
      sourceType: z.enum(['upload', 'recording', 'url']),
      origin: z.string(),
      sourceUrl: z.string().nullable(),
      durationSeconds: z.number().int().nullable(),
      language: z.string().nullable(),
      createdAt: DateTime,
      speakers: z.array(Speaker).meta({
        description: 'the note’s speakers with the names in use (as GET /v1/notes/{id}/speakers, without evidence) when the event is sent; empty when nobody was diarized or the note failed',
      }),
    }),
  })
  .meta({ id: 'WebhookPayload' })
export type WebhookPayload = z.infer<typeof WebhookPayload>
