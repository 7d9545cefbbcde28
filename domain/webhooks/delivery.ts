// One logical delivery of one event to one endpoint, stream `webhookdelivery-<deliveryId>`
// (the id is derived from the endpoint and the event, so scheduling twice is a no-op). Every
// try is in the log: a claim (`WebhookDeliveryAttemptStarted`, appended at the expected revision
// so two workers never send the same try) and its result. All tries carry the same message id
// (`webhook-id`), which receivers use to deduplicate. Retries follow a schedule of delays with
// jitter, over hours; after the last one the delivery is `failed`.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { streamKind } from '../streams.ts'

export const deliveryStream = streamKind('webhookdelivery')

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled'

export type WebhookDeliveryScheduled = DomainEvent<
  'WebhookDeliveryScheduled',
  /** `noteId` is null for a test event. */
  { deliveryId: string; endpointId: string; accountId: string; messageId: string; eventType: string; noteId: string | null; payload: Record<string, unknown>; at: string }
>
export type WebhookDeliveryAttemptStarted = DomainEvent<'WebhookDeliveryAttemptStarted', { attempt: number; workerId: string; leaseUntil: string; at: string }>
export type WebhookDeliveryAttempted = DomainEvent<
  'WebhookDeliveryAttempted',
  {
    attempt: number
    statusCode: number | null
    error: string | null
    durationMs: number
    outcome: Exclude<DeliveryStatus, 'pending'> | 'retry'
    nextAttemptAt: string | null
    /** The start of the endpoint's answer (absent in events recorded before it was kept). */
    responseExcerpt?: string | null
    at: string
  }
>
export type WebhookDeliveryEvent = WebhookDeliveryScheduled | WebhookDeliveryAttemptStarted | WebhookDeliveryAttempted

export type WebhookDeliveryCommand =
  | ({ type: 'ScheduleWebhookDelivery'; now: string } & Omit<WebhookDeliveryScheduled['data'], 'at'>)
  | { type: 'StartWebhookAttempt'; workerId: string; leaseMs: number; now: string }
  | {
      type: 'RecordWebhookAttempt'
      attempt: number
      workerId: string
      statusCode: number | null
      error: string | null
      durationMs: number
      responseExcerpt?: string | null
      /** Delay before each retry (ms); its length is the number of retries. */
      retryDelaysMs: readonly number[]
      /** In [0, 1): the share of ±25 % jitter applied to the next delay (the caller rolls it). */
      jitter: number
      /** The endpoint was deleted meanwhile: stop. */
      cancelled?: boolean
      now: string
    }

export interface WebhookDeliveryState {
  exists: boolean
  status: DeliveryStatus
  attempts: number
  nextAttemptAt: string
  running: { attempt: number; workerId: string; leaseUntil: string } | null
}

const plus = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString()

export const webhookDeliveryDecider: Decider<WebhookDeliveryCommand, WebhookDeliveryEvent, WebhookDeliveryState> = {
  initialState: () => ({ exists: false, status: 'pending', attempts: 0, nextAttemptAt: '', running: null }),
  evolve(s, e) {
    switch (e.type) {
      case 'WebhookDeliveryScheduled':
        return { exists: true, status: 'pending', attempts: 0, nextAttemptAt: e.data.at, running: null }
      case 'WebhookDeliveryAttemptStarted':
        return { ...s, attempts: e.data.attempt, running: { attempt: e.data.attempt, workerId: e.data.workerId, leaseUntil: e.data.leaseUntil }, nextAttemptAt: e.data.leaseUntil }
      case 'WebhookDeliveryAttempted':
        return { ...s, running: null, status: e.data.outcome === 'retry' ? 'pending' : e.data.outcome, nextAttemptAt: e.data.nextAttemptAt ?? s.nextAttemptAt }
    }
  },
  decide(c, s) {
    switch (c.type) {
      case 'ScheduleWebhookDelivery': {
        if (s.exists) return []
        const { type: _, now, ...data } = c
        return [{ type: 'WebhookDeliveryScheduled', data: { ...data, at: now } }]
      }
      case 'StartWebhookAttempt': {
        if (!s.exists || s.status !== 'pending') throw new DomainError('conflict', `The delivery is ${s.exists ? s.status : 'unknown'}.`)
        if (c.now < s.nextAttemptAt) throw new DomainError('conflict', `The next try is due at ${s.nextAttemptAt}.`)
        // A try whose worker died (lease over) counts as made; the next one takes its place.
        return [{ type: 'WebhookDeliveryAttemptStarted', data: { attempt: s.attempts + 1, workerId: c.workerId, leaseUntil: plus(c.now, c.leaseMs), at: c.now } }]
      }
      case 'RecordWebhookAttempt': {
        if (!s.running || s.running.attempt !== c.attempt || s.running.workerId !== c.workerId) throw new DomainError('conflict', 'This try is no longer the current one.')
        const ok = c.statusCode !== null && c.statusCode >= 200 && c.statusCode < 300
        const retriesLeft = c.attempt <= c.retryDelaysMs.length
        const delay = retriesLeft ? Math.round(c.retryDelaysMs[c.attempt - 1]! * (0.75 + c.jitter * 0.5)) : 0
        const outcome = c.cancelled ? 'cancelled' : ok ? 'delivered' : retriesLeft ? 'retry' : 'failed'
        return [
          {
            type: 'WebhookDeliveryAttempted',
            data: {
              attempt: c.attempt,
              statusCode: c.statusCode,
              error: c.error,
              durationMs: c.durationMs,
              outcome,
              nextAttemptAt: outcome === 'retry' ? plus(c.now, delay) : null,
              ...(c.responseExcerpt !== undefined ? { responseExcerpt: c.responseExcerpt } : {}),
              at: c.now,
            },
          },
        ]
      }
    }
  },
}
