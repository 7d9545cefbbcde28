// Webhook workers. The dispatcher follows the log for notes that finished (NoteReady,
// NoteFailed) or whose speakers were named or corrected (SpeakerRenamed, SpeakerNamesSuggested,
// SegmentSpeakersChanged on a ready note) from its own checkpoint and schedules one delivery per
// subscribed endpoint; the payload carries the speakers with their names in use, read from the
// one source of names (readmodels/speakerNames.ts, through the speakers query) once it has the
// event. The message id is derived from the note event's id, so a replay schedules nothing new.
// The sender polls due deliveries, claims a try on the delivery stream, signs the payload with
// the endpoint's current secrets (Standard Webhooks), POSTs it and records the result.
import { randomUUID } from 'node:crypto'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { EventStore } from '../ports/eventStore.ts'
import type { WebhookTransport } from '../ports/webhookTransport.ts'
import type { CommandHandler } from '../commands/handleCommand.ts'
import type { WebhookCommands } from '../commands/webhooks.ts'
import type { TranscriptReads } from '../commands/reads.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import { isDomainError } from '../domain/errors.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'
import { signatureHeader } from '../domain/webhooks/signing.ts'
import { deliveryStream } from '../domain/webhooks/delivery.ts'
import { startProjection, type Projection } from '../projections/runner.ts'
import { WEBHOOK_DELIVERIES, WEBHOOK_ENDPOINTS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from '../projections/webhooks.ts'
import type { WebhookPayload } from '../contract/webhooks.ts'
import { sleep } from './transcription.ts'
import { metrics } from '../ports/metrics.ts'

export interface WebhookWorkerDeps {
  events: EventStore
  docs: DocumentStore
  handler: CommandHandler
  webhooks: WebhookCommands
  transport: WebhookTransport
  /** The speakers of a note with their names in use, and the wait for the projection that writes them. */
  speakers: Pick<TranscriptReads, 'speakers'>
  sync: Pick<ReadModelSync, 'waitFor'>
  config: { retryDelaysMs: number[]; timeoutMs: number; pollMs: number }
  clock?: () => Date
  log?: (msg: string) => void
}

const TYPES = {
  NoteReady: 'note.ready',
  NoteFailed: 'note.failed',
  SpeakerRenamed: 'note.speakers_updated',
  SpeakerNamesSuggested: 'note.speakers_updated',
  // Lines given to another speaker: talk time changes, and a merge or a new speaker changes who is there.
  SegmentSpeakersChanged: 'note.speakers_updated',
} as const

export function webhookDispatcher(deps: Pick<WebhookWorkerDeps, 'handler' | 'webhooks' | 'speakers' | 'sync'>): Projection {
  /** The speakers as the API shows them, once the read models the query reads have the event (none for a note deleted meanwhile). */
  const speakersAt = async (accountId: string, noteId: string, position: number) => {
    await Promise.all(['notes', 'speakers'].map((p) => deps.sync.waitFor(p, position)))
    try {
      return (await deps.speakers.speakers(accountId, noteId)).speakers.map(({ evidence: _evidence, ...speaker }) => speaker)
    } catch (err) {
      if (isDomainError(err) && err.code === 'not_found') return []
      throw err
    }
  }
  return {
    name: 'webhook-dispatcher',
    filter: { categories: ['note'], eventTypes: Object.keys(TYPES) },
    collections: [],
    async handle(events, docs) {
      for (const e of events) {
        const eventType = TYPES[e.type as keyof typeof TYPES]
        const noteId = noteStream.idOf(e.streamName)
        const { state: note } = await deps.handler.load(noteStream.of(noteId), noteDecider)
        if (!note.exists) continue
        // Names given while the note is still being made are in its note.ready.
        if (eventType === 'note.speakers_updated' && note.phase !== 'ready') continue
        // An endpoint hears about what happens after it was configured, never about older history.
        const endpoints = await docs
          .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
          .find({ accountId: note.accountId, deleted: false, eventTypes: eventType, createdAt: { $lte: e.recordedAt } })
        if (endpoints.length === 0) continue
        const data = e.data as { durationSeconds?: number | null; language?: string | null; errorCode?: string; message?: string }
        const failed = e.type === 'NoteFailed'
        const payload: WebhookPayload = {
          type: eventType,
          timestamp: e.recordedAt,
          data: {
            noteId,
            status: failed ? 'failed' : 'ready',
            errorCode: failed ? (data.errorCode ?? null) : null,
            errorMessage: failed ? (data.message ?? null) : null,
            title: note.title,
            sourceType: note.sourceType,
            origin: note.origin,
            sourceUrl: note.sourceUrl,
            durationSeconds: e.type === 'NoteReady' ? (data.durationSeconds ?? null) : note.durationSeconds === null ? null : Math.round(note.durationSeconds),
            language: e.type === 'NoteReady' ? (data.language ?? null) : note.language,
            createdAt: note.createdAt,
            speakers: failed ? [] : await speakersAt(note.accountId, noteId, e.globalPosition),
          },
        }
        for (const ep of endpoints) {
          await deps.webhooks.schedule({ endpointId: ep._id, accountId: note.accountId, messageId: `msg_${e.id}`, eventType, noteId, payload: payload as unknown as Record<string, unknown> })
        }
      }
    },
  }
}

export function startWebhookWorkers(deps: WebhookWorkerDeps) {
  const workerId = `webhooks-${randomUUID().slice(0, 8)}`
  const clock = deps.clock ?? (() => new Date())
  const log = deps.log ?? (() => {})
  const dispatcher = startProjection(webhookDispatcher(deps), { events: deps.events, docs: deps.docs, onError: (err) => log(`[webhook-dispatcher] ${(err as Error).message}`) })
  const stopping = new AbortController()
  const leaseMs = deps.config.timeoutMs * 2 + 5000

  async function deliver(doc: WebhookDeliveryDoc) {
    const running = await deps.webhooks.startAttempt(doc._id, workerId, leaseMs)
    if (!running) return
    const { state: endpoint } = await deps.webhooks.endpoint(doc.endpointId)
    const base = { attempt: running.attempt, workerId, retryDelaysMs: deps.config.retryDelaysMs, jitter: Math.random() }
    if (!endpoint.exists || endpoint.deleted) {
      counted(await deps.webhooks.recordAttempt(doc._id, { ...base, statusCode: null, error: 'the endpoint was deleted', durationMs: 0, cancelled: true }))
      return
    }
    const delivery = (await deps.events.readStream(deliveryStream.of(doc._id), { maxCount: 1 })).events[0]
    const body = JSON.stringify((delivery?.data as { payload?: unknown }).payload ?? {})
    const now = clock()
    const timestamp = Math.floor(now.getTime() / 1000)
    const headers = {
      'webhook-id': doc.messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(await deps.webhooks.signingSecrets(doc.endpointId, now.toISOString()), doc.messageId, timestamp, body),
    }
    const r = await deps.transport.post(endpoint.url, body, headers, deps.config.timeoutMs)
    counted(await deps.webhooks.recordAttempt(doc._id, { ...base, statusCode: r.statusCode, error: r.error, durationMs: r.durationMs, responseExcerpt: r.responseExcerpt ?? null }))
  }
  /** Counts the attempt by the outcome its event records: delivered, retry, failed (out of retries), cancelled. */
  const counted = (recorded: { events: { data: unknown }[] }) => {
    const outcome = (recorded.events[0]?.data as { outcome?: string } | undefined)?.outcome
    if (outcome) metrics().webhookDeliveries.inc({ outcome })
  }

  const loop = async () => {
    while (!stopping.signal.aborted) {
      try {
        const due = await deps.docs
          .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
          .find({ status: 'pending', dueAt: { $lte: clock().toISOString() } }, { sort: { dueAt: 1 }, limit: 20 })
        // Deliveries to different endpoints go out side by side; a slow endpoint delays only its own.
        await Promise.all(due.map((doc) => deliver(doc).catch((err) => log(`[webhooks] delivery ${doc._id}: ${(err as Error).message}`))))
      } catch (err) {
        log(`[webhooks] poll failed: ${(err as Error).message}`)
      }
      await sleep(deps.config.pollMs, stopping.signal)
    }
  }
  const done = loop()
  return {
    name: 'webhooks',
    async stop() {
      stopping.abort()
      await done
      await dispatcher.stop()
    },
  }
}
