// A webhook endpoint, stream `webhook-<endpointId>`: where an account wants to hear about its
// notes, with the secret(s) that sign the calls. The secret is kept in the event (it must sign
// every call) and shown to the client only when created or rotated.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { streamKind } from '../streams.ts'

export const webhookStream = streamKind('webhook')

export const WEBHOOK_EVENT_TYPES = ['note.ready', 'note.failed', 'note.speakers_updated'] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]
/** What "send a test event" (dashboard, POST /v1/webhooks/{id}/test) delivers; no subscription needed. */
export const WEBHOOK_TEST_EVENT = 'webhook.test' as const

export type WebhookEndpointCreated = DomainEvent<
  'WebhookEndpointCreated',
  { endpointId: string; accountId: string; url: string; eventTypes: WebhookEventType[]; description: string | null; secret: string; at: string }
>
export type WebhookSecretRotated = DomainEvent<'WebhookSecretRotated', { secret: string; previousExpiresAt: string; at: string }>
export type WebhookEndpointDeleted = DomainEvent<'WebhookEndpointDeleted', { at: string }>
export type WebhookEndpointEvent = WebhookEndpointCreated | WebhookSecretRotated | WebhookEndpointDeleted

export type WebhookEndpointCommand =
  | { type: 'CreateWebhookEndpoint'; endpointId: string; accountId: string; url: string; eventTypes: WebhookEventType[]; description: string | null; secret: string; now: string }
  | { type: 'RotateWebhookSecret'; accountId: string; secret: string; graceMs: number; now: string }
  | { type: 'DeleteWebhookEndpoint'; accountId: string; now: string }

export interface WebhookEndpointState {
  exists: boolean
  deleted: boolean
  endpointId: string
  accountId: string
  url: string
  eventTypes: WebhookEventType[]
  description: string | null
  /** Newest first; `expiresAt` null for the current one. */
  secrets: { secret: string; expiresAt: string | null }[]
  createdAt: string
}

/** The secrets that sign a call made at `now`: the current one and any rotated one still in its grace period. */
export const signingSecrets = (s: WebhookEndpointState, now: string): string[] => s.secrets.filter((x) => x.expiresAt === null || x.expiresAt > now).map((x) => x.secret)

const owned = (s: WebhookEndpointState, accountId: string) => {
  if (!s.exists || s.deleted || s.accountId !== accountId) throw new DomainError('not_found', 'No webhook endpoint with that id belongs to you.')
  return s
}

export const webhookEndpointDecider: Decider<WebhookEndpointCommand, WebhookEndpointEvent, WebhookEndpointState> = {
  initialState: () => ({ exists: false, deleted: false, endpointId: '', accountId: '', url: '', eventTypes: [], description: null, secrets: [], createdAt: '' }),
  evolve(s, e) {
    switch (e.type) {
      case 'WebhookEndpointCreated': {
        const { secret, at, ...d } = e.data
        return { ...s, ...d, exists: true, deleted: false, secrets: [{ secret, expiresAt: null }], createdAt: at }
      }
      case 'WebhookSecretRotated':
        return {
          ...s,
          secrets: [{ secret: e.data.secret, expiresAt: null }, ...s.secrets.filter((x) => x.expiresAt === null || x.expiresAt > e.data.at).map((x) => ({ ...x, expiresAt: x.expiresAt ?? e.data.previousExpiresAt }))],
        }
      case 'WebhookEndpointDeleted':
        return { ...s, deleted: true }
    }
  },
  decide(c, s) {
    switch (c.type) {
      case 'CreateWebhookEndpoint': {
        if (s.exists) {
          if (s.accountId !== c.accountId) throw new DomainError('conflict', 'This endpoint id is taken.')
          return []
        }
        const { type: _, now, ...data } = c
        return [{ type: 'WebhookEndpointCreated', data: { ...data, at: now } }]
      }
      case 'RotateWebhookSecret':
        owned(s, c.accountId)
        return [{ type: 'WebhookSecretRotated', data: { secret: c.secret, previousExpiresAt: new Date(new Date(c.now).getTime() + c.graceMs).toISOString(), at: c.now } }]
      case 'DeleteWebhookEndpoint':
        owned(s, c.accountId)
        return [{ type: 'WebhookEndpointDeleted', data: { at: c.now } }]
    }
  },
}
