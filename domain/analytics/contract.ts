// The analytics topics as a public contract: which events leave the system, with which fields,
// in which schema version. Nothing is published unless it is listed here (an allowlist, not a
// blocklist), so a field added to an event later stays inside until someone decides otherwise.
//
// Never listed: secrets and anything derived from them (password hashes, API key secret hashes,
// OAuth code and token hashes, session secret hashes, webhook signing secrets), credentials in
// URLs, and emails, including ids derived from an email (`personId` is a name-based UUID of the
// email, so the `person` topic and every `personId` field stay inside).
//
// Personal content (titles, transcripts, questions and answers, speaker and person names, file
// names) is listed as `personal`: it is published only on the topics an operator opted in
// (ANALYTICS_PERSONAL_TOPICS), and otherwise the field is left out of the message.
//
// Each field's kind is checked by the compiler against the event's TypeScript type (`Field<V>`),
// and the JSON Schemas in contract/analytics/ are generated from this table
// (`npm run analytics-schemas`), so the published shape, the filter and the schemas are one thing.
import type { DomainEvent } from '../decider.ts'
import type { AccountEvent } from '../accounts/account.ts'
import type { ApiKeyEvent } from '../accounts/apiKey.ts'
import type { SessionEvent } from '../accounts/session.ts'
import type { AnalysisEvent } from '../analysis/analysis.ts'
import type { AskEvent } from '../ask/session.ts'
import type { CreditEvent } from '../credits/ledger.ts'
import type { DeliverableEvent } from '../deliverables/deliverable.ts'
import type { FolderEvent } from '../folders/folder.ts'
import type { NoteEvent } from '../notes/note.ts'
import type { TranscriptEvent } from '../notes/noteTranscript.ts'
import type { OAuthConsentEvent } from '../oauth/consent.ts'
import type { OAuthGrantEvent } from '../oauth/grant.ts'
import type { UsageEvent } from '../usage/usage.ts'
import type { VoiceEvent } from '../voice/voiceProfiles.ts'
import type { WebhookDeliveryEvent } from '../webhooks/delivery.ts'
import type { WebhookEndpointEvent } from '../webhooks/endpoint.ts'

/** Bumped on any change of a published shape; in every message (header and field). */
export const ANALYTICS_SCHEMA_VERSION = 2

type Published =
  | AccountEvent
  | ApiKeyEvent
  | SessionEvent
  | AnalysisEvent
  | AskEvent
  | CreditEvent
  | DeliverableEvent
  | FolderEvent
  | NoteEvent
  | TranscriptEvent
  | OAuthConsentEvent
  | OAuthGrantEvent
  | UsageEvent
  | VoiceEvent
  | WebhookDeliveryEvent
  | WebhookEndpointEvent

type BaseKind<V> = V extends string
  ? 'string'
  : V extends number
    ? 'integer' | 'number'
    : V extends boolean
      ? 'boolean'
      : V extends readonly string[]
        ? 'string[]'
        : V extends readonly number[]
          ? 'integer[]'
          : 'object'
type Kind<V> = null extends V ? `${BaseKind<NonNullable<V>>}|null` : BaseKind<NonNullable<V>>
/** `?` marks a field that older events lack. */
type Field<V> = undefined extends V ? `${Kind<V>}?` : Kind<V>
export type FieldSpec = string | { personal: string }
type Fields<E extends DomainEvent> = { [K in keyof E['data']]?: Field<E['data'][K]> | { personal: Field<E['data'][K]> } }
type EventFields = { [T in Published['type']]?: Fields<Extract<Published, { type: T }>> }

/** Per event type, the fields of `data` that may be published. */
export const EVENT_FIELDS = {
  // credits-<accountId>: the whole ledger (amounts and ids, no content).
  CreditAccountOpened: { accountId: 'string', plan: 'string', at: 'string' },
  CreditCycleStarted: { cycle: 'string', plan: 'string', granted: 'integer', expired: 'integer', balanceAfter: 'integer', at: 'string' },
  CreditPlanChanged: { from: 'string', to: 'string', adjustment: 'integer', balanceAfter: 'integer', at: 'string' },
  CreditsCharged: { chargeId: 'string', operation: 'string', cost: 'integer', noteId: 'string|null', requestId: 'string|null', pending: 'boolean?', balanceAfter: 'integer', at: 'string' },
  CreditsChargeCompleted: { chargeId: 'string', at: 'string' },
  CreditsChargeFailed: { chargeId: 'string', operation: 'string', noteId: 'string|null', reason: 'string', at: 'string' },
  CreditsReserved: { reservationId: 'string', operation: 'string', amount: 'integer', noteId: 'string|null', requestId: 'string|null', balanceAfter: 'integer', at: 'string' },
  CreditsCaptured: { reservationId: 'string', operation: 'string', reserved: 'integer', cost: 'integer', noteId: 'string|null', part: 'string|null?', pending: 'boolean?', balanceAfter: 'integer', at: 'string' },
  CreditsHoldExtended: { reservationId: 'string', operation: 'string', by: 'integer', amount: 'integer', noteId: 'string|null', reason: 'string', balanceAfter: 'integer', at: 'string' },
  CreditsReleased: { reservationId: 'string', operation: 'string', amount: 'integer', noteId: 'string|null', reason: 'string', balanceAfter: 'integer', at: 'string' },
  CreditsRefunded: { refundId: 'string', chargeId: 'string', operation: 'string', amount: 'integer', noteId: 'string|null', reason: 'string', balanceAfter: 'integer', at: 'string' },
  // usage-<accountId>
  MinutesReserved: { noteId: 'string', minutes: 'number', cycle: 'string', usedAfter: 'number', at: 'string' },
  MinutesReleased: { noteId: 'string', minutes: 'number', cycle: 'string', reason: 'string', usedAfter: 'number', at: 'string' },
  StorageAllocated: { noteId: 'string', bytes: 'integer', storedAfter: 'integer', at: 'string' },
  StorageFreed: { noteId: 'string', bytes: 'integer', reason: 'string', storedAfter: 'integer', at: 'string' },
  // note-<noteId>: lifecycle and sizes; titles, URLs and transcripts are personal.
  NoteCreated: {
    noteId: 'string', accountId: 'string', sourceType: 'string', origin: 'string', provider: 'string|null', language: 'string|null',
    speakers: 'integer|null?', keepAudio: 'boolean', jobId: 'string|null', reservationId: 'string|null', at: 'string',
    title: { personal: 'string' }, sourceUrl: { personal: 'string|null' },
  },
  NoteFinalized: { jobId: 'string', minutes: 'number', at: 'string', title: { personal: 'string|null' } },
  NoteEdited: { folderId: 'string|null?', keepAudio: 'boolean?', at: 'string', title: { personal: 'string?' }, description: { personal: 'string|null?' }, tags: { personal: 'string[]?' } },
  NoteTranscribed: { at: 'string', transcript: { personal: 'object' } },
  NoteReady: { durationSeconds: 'number|null', language: 'string|null', at: 'string' },
  NoteFailed: { errorCode: 'string', at: 'string' },
  NoteAudioDeleted: { reason: 'string', at: 'string' },
  // A deleted note: consumers that kept its content (personal topics) delete their copy on it.
  NoteDeleted: { accountId: 'string', at: 'string' },
  TranscriptionStarted: { jobId: 'string', attempt: 'integer', at: 'string' },
  TranscriptionProgressed: { jobId: 'string', attempt: 'integer', stage: 'string', percent: 'number|null', at: 'string' },
  TranscriptionAttemptFailed: { jobId: 'string', attempt: 'integer', errorCode: 'string', retryAt: 'string', at: 'string' },
  TranscriptionSettled: { jobId: 'string', credits: 'string', creditsReturned: 'integer', minutesReleased: 'boolean', at: 'string' },
  NoteSourceDescribed: { recordedAt: 'string|null?', durationSeconds: 'number|null?', at: 'string', title: { personal: 'string?' }, description: { personal: 'string|null?' } },
  NoteAudioStored: { sizeBytes: 'integer', contentType: 'string', at: 'string' },
  TranscriptTextReplaced: { caseSensitive: 'boolean', wholeWord: 'boolean', occurrences: 'integer', at: 'string', find: { personal: 'string' }, replace: { personal: 'string' } },
  SpeakerRenamed: { label: 'string', at: 'string', name: { personal: 'string' }, previousName: { personal: 'string|null' } },
  SpeakerVoiceExclusionChanged: { label: 'string', excluded: 'boolean', at: 'string' },
  TranslationRequested: { language: 'string', sourceLanguage: 'string|null', totalSegments: 'integer', at: 'string' },
  TranslationStarted: { language: 'string', engine: 'string', model: 'string|null', attempt: 'integer', at: 'string' },
  TranslationCompleted: { language: 'string', staleSegments: 'integer[]', at: 'string' },
  TranslationFailed: { language: 'string', errorCode: 'string', at: 'string' },
  // analysis-<noteId>
  AnalysisGenerated: { noteId: 'string', accountId: 'string', engine: 'string', model: 'string', version: 'string', template: 'string', at: 'string', analysis: { personal: 'object' } },
  AnalysisFailed: { noteId: 'string', accountId: 'string', engine: 'string', model: 'string', version: 'string', template: 'string', reason: 'string', at: 'string' },
  OutlineGenerated: { noteId: 'string', accountId: 'string', engine: 'string', model: 'string', version: 'string', durationMs: 'number', at: 'string', chapters: { personal: 'object' } },
  OutlineFailed: { noteId: 'string', accountId: 'string', engine: 'string', model: 'string', version: 'string', reason: 'string', at: 'string' },
  // ask-<sessionId>
  QuestionAnswered: {
    sessionId: 'string', accountId: 'string', noteId: 'string|null', citedSegments: 'string[]', engine: 'string', model: 'string', version: 'string', chargeId: 'string', at: 'string',
    question: { personal: 'string' }, answer: { personal: 'string' },
  },
  // deliverable-<id>
  DeliverableCreated: {
    deliverableId: 'string', noteId: 'string', accountId: 'string', kind: 'string', template: 'string', locale: 'string', engine: 'string', model: 'string', version: 'string', chargeId: 'string', at: 'string',
    title: { personal: 'string' }, subject: { personal: 'string|null' },
  },
  // folder-<id>
  FolderCreated: { folderId: 'string', accountId: 'string', at: 'string', name: { personal: 'string' } },
  FolderRenamed: { at: 'string', name: { personal: 'string' } },
  FolderDeleted: { at: 'string' },
  // account-<id>: never the email.
  AccountOpened: { accountId: 'string', at: 'string', name: { personal: 'string' } },
  AccountRenamed: { at: 'string', name: { personal: 'string' } },
  // apikey-<keyId>: never the secret hash, nor the display prefix (it shows part of the secret).
  ApiKeyCreated: { keyId: 'string', accountId: 'string', at: 'string', name: { personal: 'string' } },
  ApiKeyRevoked: { keyId: 'string', accountId: 'string', reason: 'string', at: 'string' },
  // dashsession-<sessionId>: never the secret hash, nor personId (derived from the email).
  SessionStarted: { sessionId: 'string', accountId: 'string', expiresAt: 'string', at: 'string' },
  SessionEnded: { reason: 'string', at: 'string' },
  // oauthgrant-<grantId>: never code or token hashes, nor the PKCE challenge.
  OAuthAuthorizationGranted: { grantId: 'string', clientId: 'string', accountId: 'string', scope: 'string', resource: 'string', expiresAt: 'string', at: 'string' },
  OAuthCodeRedeemed: { accessExpiresAt: 'string', refreshExpiresAt: 'string|null', at: 'string' },
  OAuthTokensRefreshed: { accessExpiresAt: 'string', refreshExpiresAt: 'string', refreshCount: 'integer', at: 'string' },
  OAuthGrantRevoked: { reason: 'string', at: 'string' },
  OAuthConsentGiven: { accountId: 'string', clientId: 'string', scope: 'string', at: 'string' },
  OAuthConsentWithdrawn: { accountId: 'string', clientId: 'string', at: 'string' },
  // webhook-<endpointId>: never the signing secret, nor the URL (it may carry credentials).
  WebhookEndpointCreated: { endpointId: 'string', accountId: 'string', eventTypes: 'string[]', at: 'string' },
  WebhookSecretRotated: { previousExpiresAt: 'string', at: 'string' },
  WebhookEndpointDeleted: { at: 'string' },
  // webhookdelivery-<id>: outcomes, never the payload or the endpoint's answer.
  WebhookDeliveryScheduled: { deliveryId: 'string', endpointId: 'string', accountId: 'string', messageId: 'string', eventType: 'string', noteId: 'string|null', at: 'string' },
  WebhookDeliveryAttemptStarted: { attempt: 'integer', at: 'string' },
  WebhookDeliveryAttempted: { attempt: 'integer', statusCode: 'integer|null', durationMs: 'number', outcome: 'string', nextAttemptAt: 'string|null', at: 'string' },
  // voice-<accountId>: consent and enrolment facts; profile names and speaker labels are personal.
  VoiceConsentGranted: { consentVersion: 'string', via: 'string', at: 'string' },
  VoiceConsentRevoked: { via: 'string', at: 'string' },
  VoiceProfileCreated: { profileId: 'string', at: 'string', name: { personal: 'string' } },
  VoiceprintEnrolled: { profileId: 'string', noteId: 'string', voiceSeconds: 'number', model: 'string', at: 'string', label: { personal: 'string' } },
  VoiceProfileExclusionChanged: { profileId: 'string', excluded: 'boolean', at: 'string' },
  VoiceprintsDeleted: { profileIds: 'string[]', reason: 'string', at: 'string' },
} as const satisfies EventFields

export type PublishedType = keyof typeof EVENT_FIELDS

/** The topics (stream categories) and the event types each carries. Other categories are not published. */
export const TOPICS: Readonly<Record<string, readonly PublishedType[]>> = {
  credits: ['CreditAccountOpened', 'CreditCycleStarted', 'CreditPlanChanged', 'CreditsCharged', 'CreditsChargeCompleted', 'CreditsChargeFailed', 'CreditsReserved', 'CreditsHoldExtended', 'CreditsCaptured', 'CreditsReleased', 'CreditsRefunded'],
  usage: ['MinutesReserved', 'MinutesReleased', 'StorageAllocated', 'StorageFreed'],
  note: [
    'NoteCreated', 'NoteFinalized', 'NoteEdited', 'NoteTranscribed', 'NoteReady', 'NoteFailed', 'NoteAudioDeleted', 'NoteDeleted',
    'TranscriptionStarted', 'TranscriptionProgressed', 'TranscriptionAttemptFailed', 'TranscriptionSettled', 'NoteSourceDescribed', 'NoteAudioStored',
    'TranscriptTextReplaced', 'SpeakerRenamed', 'SpeakerVoiceExclusionChanged', 'TranslationRequested', 'TranslationStarted', 'TranslationCompleted', 'TranslationFailed',
  ],
  analysis: ['AnalysisGenerated', 'AnalysisFailed', 'OutlineGenerated', 'OutlineFailed'],
  ask: ['QuestionAnswered'],
  deliverable: ['DeliverableCreated'],
  folder: ['FolderCreated', 'FolderRenamed', 'FolderDeleted'],
  account: ['AccountOpened', 'AccountRenamed'],
  apikey: ['ApiKeyCreated', 'ApiKeyRevoked'],
  dashsession: ['SessionStarted', 'SessionEnded'],
  oauthgrant: ['OAuthAuthorizationGranted', 'OAuthCodeRedeemed', 'OAuthTokensRefreshed', 'OAuthGrantRevoked'],
  oauthconsent: ['OAuthConsentGiven', 'OAuthConsentWithdrawn'],
  webhook: ['WebhookEndpointCreated', 'WebhookSecretRotated', 'WebhookEndpointDeleted'],
  webhookdelivery: ['WebhookDeliveryScheduled', 'WebhookDeliveryAttemptStarted', 'WebhookDeliveryAttempted'],
  voice: ['VoiceConsentGranted', 'VoiceConsentRevoked', 'VoiceProfileCreated', 'VoiceprintEnrolled', 'VoiceProfileExclusionChanged', 'VoiceprintsDeleted'],
}

/** Metadata keys that may be published (a request id ties an event to the caller's request). */
export const METADATA_FIELDS: Readonly<Record<string, string>> = { requestId: 'string|null?' }

const fieldsOf = (type: string): Readonly<Record<string, FieldSpec>> | undefined =>
  (EVENT_FIELDS as Readonly<Record<string, Readonly<Record<string, FieldSpec>>>>)[type]

/** Whether an event of this type on this stream category is published at all. */
export const isPublished = (category: string, type: string): boolean => TOPICS[category]?.includes(type as PublishedType) ?? false

/**
 * The allowlisted part of an event's data: unlisted fields dropped, personal fields kept only
 * when `personal` (the operator opted this topic in). Fields absent in the event stay absent.
 */
export function publishedData(type: string, data: Record<string, unknown>, personal: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [field, spec] of Object.entries(fieldsOf(type) ?? {})) {
    if (typeof spec !== 'string' && !personal) continue
    if (Object.hasOwn(data, field) && data[field] !== undefined) out[field] = data[field]
  }
  return out
}

export function publishedMetadata(metadata: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const field of Object.keys(METADATA_FIELDS)) if (metadata[field] !== undefined) out[field] = metadata[field]
  return out
}

// ---- JSON Schema (draft 2020-12) ------------------------------------------------------------

type Json = Record<string, unknown>

function fieldSchema(kind: string): { schema: Json; optional: boolean } {
  const optional = kind.endsWith('?')
  const [base, ...rest] = kind.replace(/\?$/, '').split('|')
  const nullable = rest.includes('null')
  const schema: Json =
    base === 'string[]' ? { type: 'array', items: { type: 'string' } }
    : base === 'integer[]' ? { type: 'array', items: { type: 'integer' } }
    : base === 'object' ? { type: ['object', 'array'] }
    : { type: base }
  if (nullable) schema.type = [...(Array.isArray(schema.type) ? schema.type : [schema.type]), 'null']
  return { schema, optional }
}

function objectSchema(fields: Readonly<Record<string, FieldSpec>>): Json {
  const properties: Record<string, Json> = {}
  const required: string[] = []
  for (const [name, spec] of Object.entries(fields)) {
    const personal = typeof spec !== 'string'
    const { schema, optional } = fieldSchema(personal ? spec.personal : spec)
    properties[name] = personal ? { ...schema, description: 'personal content: present only on topics opted in with ANALYTICS_PERSONAL_TOPICS' } : schema
    if (!personal && !optional) required.push(name)
  }
  return { type: 'object', properties, required, additionalProperties: false }
}

/** The JSON Schema of one published event type's message value. */
export function eventJsonSchema(type: PublishedType): Json {
  const topics = Object.entries(TOPICS).filter(([, types]) => types.includes(type)).map(([c]) => c)
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://notes-service.invalid/contract/analytics/${type}.schema.json`,
    title: `${type} (analytics schema version ${ANALYTICS_SCHEMA_VERSION})`,
    description: `Value of a ${type} message on the topic(s) <prefix>${topics.join(', <prefix>')}. Headers: event-id (dedup key), event-type, schema-version.`,
    type: 'object',
    properties: {
      schemaVersion: { const: ANALYTICS_SCHEMA_VERSION },
      eventId: { type: 'string', format: 'uuid' },
      type: { const: type },
      stream: { type: 'string' },
      revision: { type: 'integer', minimum: 0 },
      globalPosition: { type: 'integer', minimum: 0 },
      recordedAt: { type: 'string', format: 'date-time' },
      data: objectSchema(fieldsOf(type)!),
      metadata: objectSchema(METADATA_FIELDS),
    },
    required: ['schemaVersion', 'eventId', 'type', 'stream', 'revision', 'globalPosition', 'recordedAt', 'data', 'metadata'],
    additionalProperties: false,
  }
}

export const publishedTypes = (): PublishedType[] => Object.keys(EVENT_FIELDS) as PublishedType[]
