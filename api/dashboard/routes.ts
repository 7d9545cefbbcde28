// The dashboard's JSON endpoints, /app/api (docs/dashboard.md, "Web dashboard"). Thin like the REST routes:
// each parses with a contract schema and calls the same command or query as its REST twin, with
// a caller whose `via` is `dashboard`. Only a signed-in person's session cookie opens them (never
// an API key), and every state-changing one needs the session's CSRF token.
import { z } from 'zod'
import type { Application } from '../../commands/application.ts'
import { DomainError } from '../../domain/errors.ts'
import { cycleOf } from '../../domain/credits/plans.ts'
import { defineRoute, mountedAt, type RouteDef } from '../route.ts'
import { AccountStatus } from '../../contract/account.ts'
import { ListNotesQuery, NoteIdParams, NoteList } from '../../contract/notes.ts'
import { Transcript, VoiceProfileParams, VoiceProfilePatch, VoiceProfiles } from '../../contract/transcripts.ts'
import { featureRoutes } from '../routes/index.ts'
import { PRICES } from '../../domain/credits/prices.ts'
import { ADVICE } from '../../domain/advice.ts'
import { TEMPLATES } from '../../contract/analysis.ts'
import { DELIVERABLE_LOCALES, DELIVERABLE_TEMPLATES } from '../../domain/deliverables/templates.ts'
import { LANGUAGE_NAMES, TRANSLATION_LANGUAGES } from '../../domain/languages.ts'
import { TRANSCRIPT_FORMATS } from '../../domain/transcripts/formats.ts'
import {
  AcceptConsentRequest,
  ApiKeyList,
  ApiKeyParams,
  AuditVerdict,
  AuthorizedClientList,
  ClientParams,
  CreateApiKeyRequest,
  CreditsView,
  CycleQuery,
  DashboardNoteDetail,
  DashboardReference,
  IssuedApiKey,
  RevokedKey,
  VoiceConsentScreen,
} from '../../contract/dashboard.ts'
import { statementCsv } from '../../readmodels/ledger.ts'
import { transcriptPreviewFor } from '../../domain/transcripts/preview.ts'

export const DASHBOARD_API = '/app/api'

const common = { extension: true, invalidCode: 'invalid_request' as const }

/**
 * REST operations a person does on the dashboard as well, by operationId: mounted under /app/api
 * with the session instead of an API key, never written twice.
 */
export const REST_ON_DASHBOARD = [
  'createNote',
  'finalizeNote',
  'updateNote',
  'deleteNote',
  'listFolders',
  'createFolder',
  'renameFolder',
  'deleteFolder',
  'replaceInTranscript',
  'getTranscriptTranslation',
  'requestTranscriptTranslation',
  'listSpeakers',
  'getSpeakerTimeline',
  'changeSegmentSpeaker',
  'mergeSpeaker',
  'undoLineSpeakers',
  'suggestSpeakerNames',
  'renameSpeaker',
  'getAnalyses',
  'generateAnalyses',
  'getOutline',
  'askNote',
  'createDeliverable',
  'listDeliverables',
  'downloadDeliverable',
  // integrations (webhooks)
  'createWebhook',
  'listWebhooks',
  'deleteWebhook',
  'rotateWebhookSecret',
  'listWebhookDeliveries',
  'sendWebhookTest',
] as const

const REFERENCE: DashboardReference = {
  prices: Object.values(PRICES),
  analysisTemplates: [...TEMPLATES],
  deliverableTemplates: Object.fromEntries(Object.entries(DELIVERABLE_TEMPLATES).map(([k, v]) => [k, [...v]])),
  deliverableLocales: [...DELIVERABLE_LOCALES],
  translationLanguages: TRANSLATION_LANGUAGES.map((code) => ({ code, name: LANGUAGE_NAMES[code] })),
  transcriptFormats: [...TRANSCRIPT_FORMATS],
  advice: ADVICE,
}

/** Open to anyone, the sign-in page too: the same tables /v1/openapi.json publishes. */
export const referenceRoute = defineRoute({
  ...common,
  operationId: 'dashboardReference',
  method: 'GET',
  path: `${DASHBOARD_API}/reference`,
  tag: 'dashboard',
  summary: 'Prices (x-service-credits), templates, languages, export formats, and what each error code means with what to do next',
  response: { status: 200, schema: DashboardReference, description: 'The tables.' },
  errors: [],
  handle: async () => REFERENCE,
})

export function dashboardRoutes(app: Application): RouteDef[] {
  const byId = new Map(featureRoutes(app).map((r) => [r.operationId, r]))
  const rest = (operationId: string) => {
    const r = byId.get(operationId)
    if (!r) throw new Error(`no REST route ${operationId} to mount on the dashboard`)
    return r
  }
  const voice = app.voice
  const credits = async (accountId: string, cycle: string | undefined) => {
    const status = await app.status.status({ accountId })
    const shown = cycle ?? status.credits.cycle
    return { status, shown, lines: await app.queries.ledger.statement(accountId, shown) }
  }
  return [
    // ---- API keys ---------------------------------------------------------------------------
    defineRoute({
      ...common,
      operationId: 'dashboardListKeys',
      method: 'GET',
      path: `${DASHBOARD_API}/keys`,
      tag: 'dashboard',
      summary: 'The account’s API keys: prefix, name, status, last use',
      response: { status: 200, schema: ApiKeyList, description: 'Newest first.' },
      errors: [],
      handle: ({ caller }) => app.queries.apiKeys.list(caller.accountId),
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardCreateKey',
      method: 'POST',
      path: `${DASHBOARD_API}/keys`,
      tag: 'dashboard',
      summary: 'A new API key; the key itself is in this answer only',
      body: CreateApiKeyRequest,
      response: { status: 201, schema: IssuedApiKey, description: 'The key, shown once.' },
      errors: [],
      async handle({ caller, body }) {
        const name = body.name ?? 'dashboard'
        const issued = await app.accounts.createApiKey(caller.accountId, name)
        await app.sync.waitFor('api-keys', issued.position)
        return { id: issued.keyId, name, prefix: issued.prefix, apiKey: issued.apiKey }
      },
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardRevokeKey',
      method: 'DELETE',
      path: `${DASHBOARD_API}/keys/:keyId`,
      tag: 'dashboard',
      summary: 'Revoke an API key (at once in this process, within a second elsewhere)',
      params: ApiKeyParams,
      notFound: true,
      response: { status: 200, schema: RevokedKey, description: 'Revoked.' },
      errors: ['not_found'],
      async handle({ caller, params }) {
        await app.sync.waitFor('api-keys', (await app.accounts.revokeApiKey(caller.accountId, params.keyId, 'revoked on the dashboard')).position)
        return { id: params.keyId, status: 'revoked' as const }
      },
    }),

    // ---- plan and credits -----------------------------------------------------------------------
    defineRoute({
      ...common,
      operationId: 'dashboardCredits',
      method: 'GET',
      path: `${DASHBOARD_API}/credits`,
      tag: 'dashboard',
      summary: 'Plan, the cycle’s balance and usage, and the ledger lines of a cycle (default: the current one)',
      query: CycleQuery,
      response: { status: 200, schema: CreditsView, description: 'Status and statement.' },
      errors: [],
      async handle({ caller, query }) {
        const { status, shown, lines } = await credits(caller.accountId, query.cycle)
        const cycles = await app.queries.ledger.cycles(caller.accountId)
        return { status, cycle: shown, cycles: cycles.includes(status.credits.cycle) ? cycles : [status.credits.cycle, ...cycles], lines }
      },
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardCreditsCsv',
      method: 'GET',
      path: `${DASHBOARD_API}/credits/ledger.csv`,
      tag: 'dashboard',
      summary: 'The ledger lines of a cycle as CSV',
      query: CycleQuery,
      response: { status: 200, schema: z.string(), description: 'text/csv', contentTypes: { 'text/csv': 'one row per ledger line' } },
      errors: [],
      async handle({ caller, query, reply }) {
        const cycle = query.cycle ?? cycleOf(new Date())
        const lines = await app.queries.ledger.statement(caller.accountId, cycle)
        reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="credits-${cycle}.csv"`)
        return statementCsv(lines)
      },
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardAudit',
      method: 'GET',
      path: `${DASHBOARD_API}/credits/audit`,
      tag: 'dashboard',
      summary: 'The auditor’s verdict: the ledger replayed from its events, held against the read model (npm run audit-ledger)',
      response: { status: 200, schema: AuditVerdict, description: 'The verdict.' },
      errors: ['not_found'],
      async handle({ caller }) {
        const r = await app.audit.account(caller.accountId)
        if (!r) throw new DomainError('not_found', 'This account has no credit ledger.')
        return { accountId: r.accountId, ok: r.ok, balance: r.balance, lines: r.statement.length, problems: r.problems, auditedAt: r.auditedAt }
      },
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardAccountStatus',
      method: 'GET',
      path: `${DASHBOARD_API}/account/status`,
      tag: 'dashboard',
      summary: 'Plan, credits and usage (GET /v1/account/status)',
      response: { status: 200, schema: AccountStatus, description: 'Status.' },
      errors: [],
      handle: ({ caller }) => app.status.status(caller),
    }),

    // ---- notes --------------------------------------------------------------------------------
    defineRoute({
      ...common,
      operationId: 'dashboardListNotes',
      method: 'GET',
      path: `${DASHBOARD_API}/notes`,
      tag: 'dashboard',
      summary: 'Notes with status and progress (GET /v1/notes)',
      query: ListNotesQuery,
      invalidCode: 'invalid_query',
      response: { status: 200, schema: NoteList, description: 'A page of notes.' },
      errors: ['invalid_query'],
      handle: ({ caller, query }) => app.queries.notes.list(caller.accountId, query, transcriptPreviewFor(caller.plan)),
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardGetNote',
      method: 'GET',
      path: `${DASHBOARD_API}/notes/:id`,
      tag: 'dashboard',
      summary: 'A note (GET /v1/notes/{id}) and where its audio plays from',
      params: NoteIdParams,
      notFound: true,
      response: { status: 200, schema: DashboardNoteDetail, description: 'The note.' },
      errors: ['not_found'],
      async handle({ caller, params }) {
        const [detail, audio] = await Promise.all([app.queries.notes.detail(caller.accountId, params.id, transcriptPreviewFor(caller.plan)), app.notes.audio(caller, params.id)])
        return { ...detail, audio: audio && { url: `${DASHBOARD_API}/notes/${params.id}/audio`, contentType: audio.contentType, sizeBytes: audio.sizeBytes } }
      },
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardGetTranscript',
      method: 'GET',
      path: `${DASHBOARD_API}/notes/:id/transcript`,
      tag: 'dashboard',
      summary: 'The transcript with speakers (the JSON of GET /v1/notes/{id}/transcript; viewing it on the dashboard costs no credits)',
      params: NoteIdParams,
      notFound: true,
      response: { status: 200, schema: Transcript, description: 'The transcript.' },
      errors: ['not_found', 'no_transcript'],
      handle: ({ caller, params }) => app.queries.transcripts.get(caller.accountId, params.id, { limit: transcriptPreviewFor(caller.plan) }),
    }),

    // ---- the REST routes themselves, under the session (same schemas, handlers, prices) ----------
    ...REST_ON_DASHBOARD.map((id) => mountedAt(rest(id), '/v1', DASHBOARD_API)),
    // The charged export read (1 credit, as GET /v1/notes/{id}/transcript), beside the free view above.
    { ...mountedAt(rest('getTranscript'), '/v1', DASHBOARD_API), operationId: 'dashboardExportTranscript', path: `${DASHBOARD_API}/notes/:id/transcript/export` },

    // ---- biometric consent and voice profiles --------------------------------------------------
    defineRoute({
      ...common,
      operationId: 'dashboardVoice',
      method: 'GET',
      path: `${DASHBOARD_API}/voice`,
      tag: 'dashboard',
      summary: 'Consent status, the consent text in force and the one agreed to, and the voice profiles',
      response: { status: 200, schema: VoiceConsentScreen, description: 'The consent screen.' },
      errors: [],
      handle: ({ caller }) => voice.consentScreen(caller),
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardGrantConsent',
      method: 'POST',
      path: `${DASHBOARD_API}/voice/consent`,
      tag: 'dashboard',
      summary: 'Grant (or accept again) the biometric consent, naming the text version shown',
      body: AcceptConsentRequest,
      response: { status: 200, schema: VoiceProfiles, description: 'Consent granted.' },
      errors: ['conflict'],
      handle: ({ caller, body }) => voice.acceptConsentText(caller, body.consentVersion),
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardRevokeConsent',
      method: 'DELETE',
      path: `${DASHBOARD_API}/voice/consent`,
      tag: 'dashboard',
      summary: 'Revoke the consent; every voiceprint is deleted',
      response: { status: 200, schema: VoiceProfiles, description: 'Consent revoked.' },
      errors: [],
      handle: ({ caller }) => voice.revokeConsent(caller),
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardUpdateVoiceProfile',
      method: 'PATCH',
      path: `${DASHBOARD_API}/voice/profiles/:profileId`,
      tag: 'dashboard',
      summary: "'Do not recognise this person' on a profile (or lift it)",
      params: VoiceProfileParams,
      notFound: true,
      body: VoiceProfilePatch,
      response: { status: 200, schema: VoiceProfiles, description: 'After the change.' },
      errors: ['not_found'],
      handle: ({ caller, params, body }) => voice.setProfileExclusion(caller, params.profileId, body.voiceExcluded),
    }),

    // ---- OAuth: authorised AI clients ---------------------------------------------------------
    defineRoute({
      ...common,
      operationId: 'dashboardOAuthClients',
      method: 'GET',
      path: `${DASHBOARD_API}/oauth/clients`,
      tag: 'dashboard',
      summary: 'AI clients authorised through OAuth (MCP)',
      response: { status: 200, schema: AuthorizedClientList, description: 'The clients.' },
      errors: [],
      handle: ({ caller }) => app.authorizedClients.list(caller),
    }),
    defineRoute({
      ...common,
      operationId: 'dashboardRevokeOAuthClient',
      method: 'DELETE',
      path: `${DASHBOARD_API}/oauth/clients/:clientId`,
      tag: 'dashboard',
      summary: 'Revoke a client: its tokens stop working at once and its next authorization asks again',
      params: ClientParams,
      notFound: true,
      response: { status: 200, schema: AuthorizedClientList, description: 'The clients left.' },
      errors: ['not_found'],
      handle: ({ caller, params }) => app.authorizedClients.revoke(caller, params.clientId),
    }),
  ]
}
