// Webhook endpoints (Power plan) and their deliveries. Management checks the plan and the URL
// (http(s), public unless allowlisted: the same SSRF rules as imports, checked again on every
// call); the dispatcher schedules one delivery per endpoint and event; the delivery worker claims
// and records each try.
import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto'
import { DomainError, isDomainError } from '../domain/errors.ts'
import { uuidFromName } from '../domain/ids.ts'
import { refusedTarget } from './publicTarget.ts'
import { SECRET_PREFIX } from '../domain/webhooks/signing.ts'
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, signingSecrets, webhookEndpointDecider, webhookStream, type WebhookEndpointCommand } from '../domain/webhooks/endpoint.ts'
import { deliveryStream, webhookDeliveryDecider, type WebhookDeliveryCommand } from '../domain/webhooks/delivery.ts'
import type { Plan } from '../domain/credits/plans.ts'
import type { HostResolver } from '../ports/hostResolver.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { CreateWebhookRequest, WebhookTestPayload } from '../contract/webhooks.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { Caller } from './context.ts'
import type { WebhookReads } from './reads.ts'

export const WEBHOOKS_PLAN: Plan = 'power'
export const MAX_WEBHOOK_ENDPOINTS = 10

/**
 * Signing secrets are stored sealed (AES-256-GCM) in the events, so the event store, its backups
 * and the analytics topics never carry them in clear; the key (WEBHOOK_SECRET_KEY, or one kept in
 * the data directory) opens them where calls are signed.
 */
export class SecretBox {
  private readonly key: Buffer
  constructor(keyMaterial: string) {
    this.key = createHash('sha256').update(keyMaterial).digest()
  }
  seal(plain: string): string {
    const iv = randomBytes(12)
    const c = createCipheriv('aes-256-gcm', this.key, iv)
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()])
    return `sealed:v1:${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`
  }
  open(sealed: string): string {
    if (!sealed.startsWith('sealed:v1:')) return sealed
    const raw = Buffer.from(sealed.slice('sealed:v1:'.length), 'base64')
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12))
    d.setAuthTag(raw.subarray(12, 28))
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8')
  }
}

export interface WebhookCommandsDeps {
  handler: CommandHandler
  reads: WebhookReads
  sync: ReadModelSync
  resolver: HostResolver
  allowlist: readonly string[]
  rotationGraceMs: number
  secrets: SecretBox
  clock?: () => Date
}

const deliveryIdOf = (endpointId: string, messageId: string) => uuidFromName(`webhook-delivery:${endpointId}`, messageId)

export const newWebhookSecret = () => `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`

export class WebhookCommands {
  private readonly clock: () => Date
  constructor(private readonly deps: WebhookCommandsDeps) {
    this.clock = deps.clock ?? (() => new Date())
  }

  private now = () => this.clock().toISOString()

  private requirePlan(caller: Caller) {
    if (caller.plan !== WEBHOOKS_PLAN) {
      throw new DomainError('tier_upgrade_required', `Webhooks are part of the ${WEBHOOKS_PLAN} plan; this account is on ${caller.plan}.`, { currentTier: caller.plan, requiredTier: WEBHOOKS_PLAN })
    }
  }

  private async endpointCommand(caller: Caller, endpointId: string, command: WebhookEndpointCommand) {
    const r = await this.deps.handler.handle(webhookStream.of(endpointId), command, webhookEndpointDecider, { metadata: { requestId: caller.requestId, accountId: caller.accountId } })
    await this.deps.sync.waitFor('webhooks', r.position)
    return r
  }

  private async checkUrl(raw: string): Promise<string> {
    let url: URL
    try {
      url = new URL(raw.trim())
    } catch {
      throw new DomainError('invalid_request', 'url is not a valid absolute URL.')
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DomainError('invalid_request', 'url must be an http(s) URL.')
    if (url.username || url.password) throw new DomainError('invalid_request', 'url must not carry credentials.')
    const refused = await refusedTarget(this.deps.resolver, url, this.deps.allowlist)
    if (refused) throw new DomainError('invalid_request', `url cannot receive webhooks: ${refused}.`)
    return url.href
  }

  async create(caller: Caller, body: CreateWebhookRequest) {
    this.requirePlan(caller)
    const url = await this.checkUrl(body.url)
    const existing = (await this.deps.reads.endpoints(caller.accountId)).length
    if (existing >= MAX_WEBHOOK_ENDPOINTS) throw new DomainError('invalid_request', `At most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints per account; delete one first.`)
    const endpointId = randomUUID()
    const secret = newWebhookSecret()
    const eventTypes = body.events ? [...new Set(body.events)] : [...WEBHOOK_EVENT_TYPES]
    const r = await this.endpointCommand(caller, endpointId, {
      type: 'CreateWebhookEndpoint',
      endpointId,
      accountId: caller.accountId,
      url,
      eventTypes,
      description: body.description ?? null,
      secret: this.deps.secrets.seal(secret),
      now: this.now(),
    })
    return { id: endpointId, url, events: eventTypes, description: body.description ?? null, createdAt: r.state.createdAt, secret }
  }

  async list(caller: Caller) {
    this.requirePlan(caller)
    return { webhooks: await this.deps.reads.endpoints(caller.accountId) }
  }

  async remove(caller: Caller, endpointId: string) {
    this.requirePlan(caller)
    await this.endpointCommand(caller, endpointId, { type: 'DeleteWebhookEndpoint', accountId: caller.accountId, now: this.now() })
  }

  async rotate(caller: Caller, endpointId: string) {
    this.requirePlan(caller)
    const secret = newWebhookSecret()
    const r = await this.endpointCommand(caller, endpointId, { type: 'RotateWebhookSecret', accountId: caller.accountId, secret: this.deps.secrets.seal(secret), graceMs: this.deps.rotationGraceMs, now: this.now() })
    const previous = r.state.secrets[1]
    return { id: endpointId, secret, previousSecretExpiresAt: previous?.expiresAt ?? this.now() }
  }

  async deliveries(caller: Caller, endpointId: string) {
    this.requirePlan(caller)
    const deliveries = await this.deps.reads.deliveries(caller.accountId, endpointId)
    if (!deliveries) throw new DomainError('not_found', 'No webhook endpoint with that id belongs to you.')
    return { deliveries }
  }

  /**
   * "Send a test event": one delivery of a `webhook.test` payload to this endpoint, signed and
   * retried like any other, in the delivery log like any other. The sender picks it up on its
   * next poll.
   */
  async sendTest(caller: Caller, endpointId: string) {
    this.requirePlan(caller)
    const { state } = await this.endpoint(endpointId)
    if (!state.exists || state.deleted || state.accountId !== caller.accountId) throw new DomainError('not_found', 'No webhook endpoint with that id belongs to you.')
    const messageId = `msg_test_${randomUUID()}`
    const payload: WebhookTestPayload = {
      type: WEBHOOK_TEST_EVENT,
      timestamp: this.now(),
      data: { endpointId, message: 'A test event sent from the dashboard: your endpoint is reachable and can check the signature.' },
    }
    const r = await this.schedule({ endpointId, accountId: caller.accountId, messageId, eventType: WEBHOOK_TEST_EVENT, noteId: null, payload })
    await this.deps.sync.waitFor('webhooks', r.position)
    return { id: deliveryIdOf(endpointId, messageId), messageId, eventType: WEBHOOK_TEST_EVENT }
  }

  // ---- used by the workers -------------------------------------------------------------------

  endpoint(endpointId: string) {
    return this.deps.handler.load(webhookStream.of(endpointId), webhookEndpointDecider)
  }

  /** The clear secrets that sign a call made at `now`. */
  async signingSecrets(endpointId: string, now: string): Promise<string[]> {
    const { state } = await this.endpoint(endpointId)
    return signingSecrets(state, now).map((s) => this.deps.secrets.open(s))
  }

  /** One logical delivery per endpoint and message id: scheduling it again changes nothing. */
  schedule(d: { endpointId: string; accountId: string; messageId: string; eventType: string; noteId: string | null; payload: Record<string, unknown> }) {
    const deliveryId = deliveryIdOf(d.endpointId, d.messageId)
    return this.deps.handler.handle(deliveryStream.of(deliveryId), { type: 'ScheduleWebhookDelivery', deliveryId, ...d, now: this.now() }, webhookDeliveryDecider)
  }

  async startAttempt(deliveryId: string, workerId: string, leaseMs: number) {
    try {
      const r = await this.deps.handler.handle(deliveryStream.of(deliveryId), { type: 'StartWebhookAttempt', workerId, leaseMs, now: this.now() }, webhookDeliveryDecider)
      return r.state.running
    } catch (err) {
      if (isDomainError(err) && err.code === 'conflict') return null
      throw err
    }
  }

  recordAttempt(deliveryId: string, c: Omit<Extract<WebhookDeliveryCommand, { type: 'RecordWebhookAttempt' }>, 'type' | 'now'>) {
    return this.deps.handler.handle(deliveryStream.of(deliveryId), { type: 'RecordWebhookAttempt', ...c, now: this.now() }, webhookDeliveryDecider)
  }

  loadDelivery(deliveryId: string) {
    return this.deps.handler.load(deliveryStream.of(deliveryId), webhookDeliveryDecider)
  }
}
