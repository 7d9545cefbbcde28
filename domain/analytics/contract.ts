// The analytics topics as a public contract: which events leave the system, with which fields,
// in which schema version. Nothing is published unless it is listed here (an allowlist, not a
// blocklist), so a field added to an event later stays inside until someone decides otherwise.
//
// Never listed: secrets and anything derived from them (password hashes, API key secret hashes,
// OAuth code and token hashes, session secret hashes, webhook signing secrets), URLs that may
// carry credentials (webhook and import source URLs), and emails, including ids derived from an
// email (`personId` is a name-based UUID of the email, so the `person` topic and every
// `personId` field stay inside).
//
// Personal content (titles, transcripts, questions and answers, speaker and person names, file
// names) is listed as `personal`: it is published only on the topics an operator opted in
// (ANALYTICS_PERSONAL_TOPICS), and otherwise the field is left out of the message.
//
// The table names fields only; their types are the events' own. The compiler checks that every
// listed field exists on its event's TypeScript type (`Fields<E>`), and the JSON Schemas in
// contract/analytics/ are generated from those same types (`Published`, read by
// ts-json-schema-generator in scripts/analyticsSchemas.ts), cut down to the listed fields. So a
// change of an event's type changes its schema, and the schema says what the filter lets out.
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
export const ANALYTICS_SCHEMA_VERSION = 4

export type Published =
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

/** `public`: always published; `personal`: only on topics an operator opted in. */
export type Visibility = 'public' | 'personal'
type Fields<E extends DomainEvent> = { [K in keyof E['data']]?: Visibility }
type EventFields = { [T in Published['type']]?: Fields<Extract<Published, { type: T }>> }

/** Per event type, the fields of `data` that may be published. */
export const EVENT_FIELDS = {
  // credits-<accountId>: the whole ledger (amounts and ids, no content).
  CreditAccountOpened: { accountId: 'public', plan: 'public', at: 'public' },
  CreditCycleStarted: { cycle: 'public', plan: 'public', granted: 'public', expired: 'public', balanceAfter: 'public', at: 'public' },
  CreditPlanChanged: { from: 'public', to: 'public', adjustment: 'public', balanceAfter: 'public', at: 'public' },
  CreditsCharged: { chargeId: 'public', operation: 'public', cost: 'public', noteId: 'public', requestId: 'public', pending: 'public', balanceAfter: 'public', at: 'public' },
  CreditsChargeCompleted: { chargeId: 'public', at: 'public' },
  CreditsChargeFailed: { chargeId: 'public', operation: 'public', noteId: 'public', reason: 'public', at: 'public' },
  CreditsReserved: { reservationId: 'public', operation: 'public', amount: 'public', noteId: 'public', requestId: 'public', balanceAfter: 'public', at: 'public' },
  CreditsCaptured: { reservationId: 'public', operation: 'public', reserved: 'public', cost: 'public', noteId: 'public', part: 'public', pending: 'public', balanceAfter: 'public', at: 'public' },
  CreditsHoldExtended: { reservationId: 'public', operation: 'public', by: 'public', amount: 'public', noteId: 'public', reason: 'public', balanceAfter: 'public', at: 'public' },
  CreditsReleased: { reservationId: 'public', operation: 'public', amount: 'public', noteId: 'public', reason: 'public', balanceAfter: 'public', at: 'public' },
  CreditsRefunded: { refundId: 'public', chargeId: 'public', operation: 'public', amount: 'public', noteId: 'public', reason: 'public', balanceAfter: 'public', at: 'public' },
  // usage-<accountId>
  MinutesReserved: { noteId: 'public', minutes: 'public', cycle: 'public', usedAfter: 'public', at: 'public' },
  MinutesReleased: { noteId: 'public', minutes: 'public', cycle: 'public', reason: 'public', usedAfter: 'public', at: 'public' },
  StorageAllocated: { noteId: 'public', bytes: 'public', storedAfter: 'public', at: 'public' },
  StorageFreed: { noteId: 'public', bytes: 'public', reason: 'public', storedAfter: 'public', at: 'public' },
  // note-<noteId>: lifecycle and sizes; titles and transcripts are personal. Never the source
  // URL, even opted in: an import link may carry credentials (a presigned URL's signature, a
  // token in the query, user:password@); schema version 3 dropped it.
  NoteCreated: {
    noteId: 'public', accountId: 'public', sourceType: 'public', origin: 'public', provider: 'public', language: 'public',
    speakers: 'public', keepAudio: 'public', jobId: 'public', reservationId: 'public', at: 'public',
    title: 'personal',
  },
  NoteFinalized: { jobId: 'public', minutes: 'public', at: 'public', title: 'personal' },
  NoteEdited: { folderId: 'public', keepAudio: 'public', at: 'public', title: 'personal', description: 'personal', tags: 'personal' },
  NoteTranscribed: { at: 'public', transcript: 'personal' },
  NoteReady: { durationSeconds: 'public', language: 'public', at: 'public' },
  NoteFailed: { errorCode: 'public', at: 'public' },
  NoteAudioDeleted: { reason: 'public', at: 'public' },
  // A deleted note: consumers that kept its content (personal topics) delete their copy on it.
  NoteDeleted: { accountId: 'public', at: 'public' },
  TranscriptionStarted: { jobId: 'public', attempt: 'public', at: 'public' },
  TranscriptionProgressed: { jobId: 'public', attempt: 'public', stage: 'public', percent: 'public', at: 'public' },
  TranscriptionAttemptFailed: { jobId: 'public', attempt: 'public', errorCode: 'public', retryAt: 'public', at: 'public' },
  TranscriptionSettled: { jobId: 'public', credits: 'public', creditsReturned: 'public', minutesReleased: 'public', at: 'public' },
  NoteSourceDescribed: { recordedAt: 'public', durationSeconds: 'public', at: 'public', title: 'personal', description: 'personal' },
  NoteAudioStored: { sizeBytes: 'public', contentType: 'public', at: 'public' },
  TranscriptTextReplaced: { caseSensitive: 'public', wholeWord: 'public', occurrences: 'public', at: 'public', find: 'personal', replace: 'personal' },
  SpeakerRenamed: { label: 'public', at: 'public', name: 'personal', previousName: 'personal' },
  SpeakerVoiceExclusionChanged: { label: 'public', excluded: 'public', at: 'public' },
  TranslationRequested: { language: 'public', sourceLanguage: 'public', totalSegments: 'public', at: 'public' },
  TranslationStarted: { language: 'public', engine: 'public', model: 'public', attempt: 'public', at: 'public' },
  TranslationCompleted: { language: 'public', staleSegments: 'public', at: 'public' },
  TranslationFailed: { language: 'public', errorCode: 'public', at: 'public' },
  // analysis-<noteId>
  AnalysisGenerated: { noteId: 'public', accountId: 'public', engine: 'public', model: 'public', version: 'public', template: 'public', at: 'public', analysis: 'personal' },
  AnalysisFailed: { noteId: 'public', accountId: 'public', engine: 'public', model: 'public', version: 'public', template: 'public', reason: 'public', at: 'public' },
  OutlineGenerated: { noteId: 'public', accountId: 'public', engine: 'public', model: 'public', version: 'public', durationMs: 'public', at: 'public', chapters: 'personal' },
  OutlineFailed: { noteId: 'public', accountId: 'public', engine: 'public', model: 'public', version: 'public', reason: 'public', at: 'public' },
  // ask-<sessionId>
  QuestionAnswered: {
    sessionId: 'public', accountId: 'public', noteId: 'public', citedSegments: 'public', engine: 'public', model: 'public', version: 'public', chargeId: 'public', at: 'public',
    question: 'personal', answer: 'personal',
  },
  // deliverable-<id>
  DeliverableCreated: {
    deliverableId: 'public', noteId: 'public', accountId: 'public', kind: 'public', template: 'public', locale: 'public', engine: 'public', model: 'public', version: 'public', chargeId: 'public', at: 'public',
    title: 'personal', subject: 'personal',
  },
  // folder-<id>
  FolderCreated: { folderId: 'public', accountId: 'public', at: 'public', name: 'personal' },
  FolderRenamed: { at: 'public', name: 'personal' },
  FolderDeleted: { at: 'public' },
  // account-<id>: never the email.
  AccountOpened: { accountId: 'public', at: 'public', name: 'personal' },
  AccountRenamed: { at: 'public', name: 'personal' },
  // apikey-<keyId>: never the secret hash, nor the display prefix (it shows part of the secret).
  ApiKeyCreated: { keyId: 'public', accountId: 'public', at: 'public', name: 'personal' },
  ApiKeyRevoked: { keyId: 'public', accountId: 'public', reason: 'public', at: 'public' },
  // dashsession-<sessionId>: never the secret hash, nor personId (derived from the email).
  SessionStarted: { sessionId: 'public', accountId: 'public', expiresAt: 'public', at: 'public' },
  SessionEnded: { reason: 'public', at: 'public' },
  // oauthgrant-<grantId>: never code or token hashes, nor the PKCE challenge.
  OAuthAuthorizationGranted: { grantId: 'public', clientId: 'public', accountId: 'public', scope: 'public', resource: 'public', expiresAt: 'public', at: 'public' },
  OAuthCodeRedeemed: { accessExpiresAt: 'public', refreshExpiresAt: 'public', at: 'public' },
  OAuthTokensRefreshed: { accessExpiresAt: 'public', refreshExpiresAt: 'public', refreshCount: 'public', at: 'public' },
  OAuthGrantRevoked: { reason: 'public', at: 'public' },
  OAuthConsentGiven: { accountId: 'public', clientId: 'public', scope: 'public', at: 'public' },
  OAuthConsentWithdrawn: { accountId: 'public', clientId: 'public', at: 'public' },
  // webhook-<endpointId>: never the signing secret, nor the URL (it may carry credentials).
  WebhookEndpointCreated: { endpointId: 'public', accountId: 'public', eventTypes: 'public', at: 'public' },
  WebhookSecretRotated: { previousExpiresAt: 'public', at: 'public' },
  WebhookEndpointDeleted: { at: 'public' },
  // webhookdelivery-<id>: outcomes, never the payload or the endpoint's answer.
  WebhookDeliveryScheduled: { deliveryId: 'public', endpointId: 'public', accountId: 'public', messageId: 'public', eventType: 'public', noteId: 'public', at: 'public' },
  WebhookDeliveryAttemptStarted: { attempt: 'public', at: 'public' },
  WebhookDeliveryAttempted: { attempt: 'public', statusCode: 'public', durationMs: 'public', outcome: 'public', nextAttemptAt: 'public', at: 'public' },
  // voice-<accountId>: consent and enrolment facts; profile names and speaker labels are personal.
  VoiceConsentGranted: { consentVersion: 'public', via: 'public', at: 'public' },
  VoiceConsentRevoked: { via: 'public', at: 'public' },
  VoiceProfileCreated: { profileId: 'public', noteId: 'public', at: 'public', name: 'personal' },
  VoiceprintEnrolled: { profileId: 'public', noteId: 'public', voiceSeconds: 'public', model: 'public', at: 'public', label: 'personal', name: 'personal' },
  VoiceProfileExclusionChanged: { profileId: 'public', excluded: 'public', at: 'public' },
  VoiceprintsDeleted: { profileIds: 'public', reason: 'public', at: 'public' },
  VoiceNoteForgotten: { deletedNoteId: 'public', profiles: 'public', at: 'public' },
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
  voice: ['VoiceConsentGranted', 'VoiceConsentRevoked', 'VoiceProfileCreated', 'VoiceprintEnrolled', 'VoiceProfileExclusionChanged', 'VoiceprintsDeleted', 'VoiceNoteForgotten'],
}

/** The published part of an event's metadata. */
export interface PublishedMetadata {
  /** The request that caused the event (the caller's `X-Request-Id` or a generated one). */
  requestId?: string | null
}

/** Metadata keys that may be published (a request id ties an event to the caller's request). */
export const METADATA_FIELDS = { requestId: 'public' } as const satisfies Record<keyof PublishedMetadata, Visibility>

/**
 * The JSON value of every message on the analytics topics. Its schema, per event type, is in
 * contract/analytics/<type>.schema.json, generated from this interface, `PublishedMetadata` and
 * the event's own type.
 */
export interface ForwardedEvent {
  /** The analytics schema version the message was written in; also the `schema-version` header. */
  schemaVersion: number
  /**
   * The event's id: the deduplication key (delivery is at-least-once); also the `event-id` header.
   * @format uuid
   */
  eventId: string
  /** The event type; also the `event-type` header. */
  type: string
  /** The stream the event belongs to, e.g. `credits-<accountId>`; also the message key. */
  stream: string
  /**
   * Position within the stream, from 0 (a gap where an event of the stream is not published).
   * @asType integer
   * @minimum 0
   */
  revision: number
  /**
   * Position in the global log: increasing in commit order, not contiguous.
   * @asType integer
   * @minimum 0
   */
  globalPosition: number
  /**
   * Commit time (ISO 8601).
   * @format date-time
   */
  recordedAt: string
  /** The event's allowlisted fields (personal ones only on opted-in topics). */
  data: Record<string, unknown>
  metadata: PublishedMetadata
}

/** The allowlisted fields of an event type's data, or undefined when the type is not published. */
export const fieldsOf = (type: string): Readonly<Record<string, Visibility>> | undefined =>
  (EVENT_FIELDS as Readonly<Record<string, Readonly<Record<string, Visibility>>>>)[type]

/** Whether an event of this type on this stream category is published at all. */
export const isPublished = (category: string, type: string): boolean => TOPICS[category]?.includes(type as PublishedType) ?? false

/**
 * The allowlisted part of an event's data: unlisted fields dropped, personal fields kept only
 * when `personal` (the operator opted this topic in). Fields absent in the event stay absent.
 */
export function publishedData(type: string, data: Record<string, unknown>, personal: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [field, spec] of Object.entries(fieldsOf(type) ?? {})) {
    if (spec === 'personal' && !personal) continue
    if (Object.hasOwn(data, field) && data[field] !== undefined) out[field] = data[field]
  }
  return out
}

export function publishedMetadata(metadata: Record<string, unknown>): PublishedMetadata {
  const out: Record<string, unknown> = {}
  for (const field of Object.keys(METADATA_FIELDS)) if (metadata[field] !== undefined) out[field] = metadata[field]
  return out as PublishedMetadata
}

export const publishedTypes = (): PublishedType[] => Object.keys(EVENT_FIELDS) as PublishedType[]
