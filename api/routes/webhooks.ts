// Webhook endpoints over REST (extension until the dashboard's integrations page exists; spec
// part 6): create (the secret is shown once), list, delete, rotate the secret, and the delivery
// log of one endpoint. Power plan only: other plans get 403 tier_upgrade_required.
import { z } from 'zod'
import type { Application } from '../../commands/application.ts'
import { MAX_WEBHOOK_ENDPOINTS } from '../../commands/webhooks.ts'
import { CreateWebhookRequest, RotatedSecret, WebhookDeliveryList, WebhookEndpointWithSecret, WebhookIdParams, WebhookList, WebhookTestQueued } from '../../contract/webhooks.ts'
import { defineRoute, type RouteDef } from '../route.ts'

const SIGNING =
  'Each call is a POST of a JSON `WebhookPayload` signed the Standard Webhooks way: headers `webhook-id` (the same on every retry of one event: deduplicate on it), ' +
  '`webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the base64-decoded part of the secret after `whsec_`; ' +
  'during a rotation the header carries one signature per valid secret, space separated. Any 2xx answer is a delivery; anything else is retried with exponential backoff and jitter over about a day.'

const Deleted = z.object({ deleted: z.literal(true), id: z.uuid() })

export const webhookRoutes = (app: Application): RouteDef[] => [
  defineRoute({
    operationId: 'createWebhook',
    method: 'POST',
    path: '/v1/webhooks',
    tag: 'webhooks',
    summary: 'Add a webhook endpoint (Power plan); the signing secret is in this answer only',
    description: SIGNING,
    extension: true,
    body: CreateWebhookRequest,
    invalidCode: 'invalid_request',
    response: {
      status: 201,
      schema: WebhookEndpointWithSecret,
      description: 'The endpoint, with its secret (shown once).',
      links: Object.fromEntries(['deleteWebhook', 'rotateWebhookSecret', 'listWebhookDeliveries', 'sendWebhookTest'].map((operationId) => [operationId, { operationId, parameters: { id: '$response.body#/id' } }])),
    },
    errors: ['invalid_request'],
    errorConditions: {
      invalid_request:
        `malformed body, a URL with credentials, a URL whose host does not resolve or resolves to a non-public address (unless allowlisted), or already ${MAX_WEBHOOK_ENDPOINTS} endpoints`,
    },
    handle: ({ caller, body }) => app.webhooks.create(caller, body),
  }),
  defineRoute({
    operationId: 'listWebhooks',
    method: 'GET',
    path: '/v1/webhooks',
    tag: 'webhooks',
    summary: 'The webhook endpoints of this account (never their secrets)',
    extension: true,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: WebhookList, description: 'The endpoints.' },
    errors: [],
    handle: ({ caller }) => app.webhooks.list(caller),
  }),
  defineRoute({
    operationId: 'deleteWebhook',
    method: 'DELETE',
    path: '/v1/webhooks/:id',
    tag: 'webhooks',
    summary: 'Remove a webhook endpoint; its pending deliveries are cancelled',
    extension: true,
    params: WebhookIdParams,
    notFound: true,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: Deleted, description: 'Removed.' },
    errors: ['not_found'],
    async handle({ caller, params }) {
      await app.webhooks.remove(caller, params.id)
      return { deleted: true as const, id: params.id }
    },
  }),
  defineRoute({
    operationId: 'rotateWebhookSecret',
    method: 'POST',
    path: '/v1/webhooks/:id/rotate',
    tag: 'webhooks',
    summary: 'Replace the signing secret; the previous one keeps signing (next to the new one) for a grace period',
    extension: true,
    params: WebhookIdParams,
    notFound: true,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: RotatedSecret, description: 'The new secret (shown once).' },
    errors: ['not_found'],
    handle: ({ caller, params }) => app.webhooks.rotate(caller, params.id),
  }),
  defineRoute({
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    path: '/v1/webhooks/:id/deliveries',
    tag: 'webhooks',
    summary: 'The delivery log of an endpoint, newest first (last 100)',
    extension: true,
    params: WebhookIdParams,
    notFound: true,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: WebhookDeliveryList, description: 'Deliveries with their status and tries.' },
    errors: ['not_found'],
    handle: ({ caller, params }) => app.webhooks.deliveries(caller, params.id),
  }),
  defineRoute({
    operationId: 'sendWebhookTest',
    method: 'POST',
    path: '/v1/webhooks/:id/test',
    tag: 'webhooks',
    summary: 'Send a test event (`webhook.test`) to the endpoint; it is signed, retried and logged like any delivery',
    extension: true,
    params: WebhookIdParams,
    notFound: true,
    invalidCode: 'invalid_request',
    response: { status: 202, schema: WebhookTestQueued, description: 'Queued: watch it in the delivery log.' },
    errors: ['not_found'],
    handle: ({ caller, params }) => app.webhooks.sendTest(caller, params.id),
  }),
]
