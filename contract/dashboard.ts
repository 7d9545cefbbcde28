// The dashboard's JSON endpoints under /app/api (docs/dashboard.md, "Web dashboard"): requests and answers.
// Not part of the /v1 contract: these answer only to a signed-in person's session cookie, never
// to an API key. Shapes the REST API already has (notes, transcripts, voice profiles, webhooks,
// account status) are reused as they are.
import { z } from 'zod'
import { DateTime, Uuid } from './common.ts'
import { AccountStatus, Plan } from './account.ts'
import { VoiceProfiles } from './transcripts.ts'
import { NoteDetail } from './notes.ts'
import { PASSWORD_MAX_LENGTH } from '../domain/accounts/password.ts'
import { CREDIT_EVENT_TYPES } from '../domain/credits/ledger.ts'

export const SignInRequest = z.object({
  email: z.string().min(3).max(320),
  password: z.string().min(1).max(PASSWORD_MAX_LENGTH),
})

export const SessionInfo = z.object({
  person: z.object({ personId: Uuid, email: z.string(), name: z.string() }),
  account: z.object({ accountId: Uuid, name: z.string(), plan: Plan }),
  expiresAt: DateTime,
  /** Send it back as `X-CSRF-Token` on every POST, PATCH and DELETE. */
  csrfToken: z.string(),
})
export type SessionInfo = z.infer<typeof SessionInfo>

export const SignedOut = z.object({ signedOut: z.literal(true) })

// ---- API keys -----------------------------------------------------------------------------------

export const ApiKeyView = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().meta({ description: 'enough to recognise the key, useless to use it' }),
  status: z.enum(['active', 'revoked']),
  createdAt: DateTime,
  revokedAt: DateTime.nullable(),
  lastUsedAt: DateTime.nullable().meta({ description: 'recorded at most once per key every API_KEY_USAGE_INTERVAL_SECONDS' }),
})
export const ApiKeyList = z.object({ keys: z.array(ApiKeyView) })
export type ApiKeyList = z.infer<typeof ApiKeyList>
export const CreateApiKeyRequest = z.object({ name: z.string().trim().min(1).max(80).optional() })
export const IssuedApiKey = z.object({ id: z.string(), name: z.string(), prefix: z.string(), apiKey: z.string().meta({ description: 'shown this once' }) })
export const ApiKeyParams = z.object({ keyId: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/) })
export const RevokedKey = z.object({ id: z.string(), status: z.literal('revoked') })

// ---- credits --------------------------------------------------------------------------------------

export const CycleQuery = z.object({ cycle: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/).optional() })

export const LedgerLine = z.object({
  id: z.string(),
  revision: z.number().int(),
  type: z.enum(CREDIT_EVENT_TYPES as [string, ...string[]]),
  operation: z.string().nullable(),
  noteId: z.string().nullable(),
  noteTitle: z.string().nullable(),
  reference: z.string().nullable().meta({ description: 'the charge, reservation or refund the line is about' }),
  delta: z.number().int(),
  balanceAfter: z.number().int(),
  at: DateTime,
})
export type LedgerLine = z.infer<typeof LedgerLine>

export const CreditsView = z.object({
  status: AccountStatus,
  cycle: z.string(),
  cycles: z.array(z.string()).meta({ description: 'cycles with ledger lines, newest first' }),
  lines: z.array(LedgerLine),
})
export type CreditsView = z.infer<typeof CreditsView>

export const AuditVerdict = z.object({
  accountId: Uuid,
  ok: z.boolean(),
  balance: z.number().int().meta({ description: 'the balance a replay of the ledger events gives' }),
  lines: z.number().int(),
  problems: z.array(z.string()),
  auditedAt: DateTime,
})

// ---- notes ----------------------------------------------------------------------------------------

export const DashboardNoteDetail = NoteDetail.extend({
  audio: z
    .object({ url: z.string(), contentType: z.string(), sizeBytes: z.number().int() })
    .nullable()
    .meta({ description: 'the stored audio of an upload, streamed with range support; null for imports (their audio is not kept)' }),
})

// ---- voice ----------------------------------------------------------------------------------------

const ConsentTextSchema = z.object({ version: z.string(), title: z.string(), paragraphs: z.array(z.string()) })
export const VoiceConsentScreen = VoiceProfiles.extend({
  consentText: ConsentTextSchema.meta({ description: 'the text in force' }),
  grantedVersion: z.string().nullable(),
  grantedText: ConsentTextSchema.nullable().meta({ description: 'the text the account agreed to, when it differs' }),
})
export const AcceptConsentRequest = z.object({ consentVersion: z.string().min(1).max(40) })

// ---- OAuth ----------------------------------------------------------------------------------------

export const AuthorizedClient = z.object({
  clientId: Uuid,
  clientName: z.string().nullable(),
  clientUri: z.string().nullable(),
  scope: z.string(),
  approvedAt: DateTime.nullable(),
  activeGrants: z.number().int(),
  lastTokenAt: DateTime.nullable().meta({ description: 'when the client last got tokens (sign-in or refresh)' }),
  expiresAt: DateTime.nullable().meta({ description: 'hard expiry of its latest authorization (90 days)' }),
})
export const AuthorizedClientList = z.object({ clients: z.array(AuthorizedClient) })
export type AuthorizedClientList = z.infer<typeof AuthorizedClientList>
export const ClientParams = z.object({ clientId: Uuid })

// ---- what the pages need to know before acting ------------------------------------------------------

const AdviceSchema = z.object({ sentence: z.string(), next: z.string() })

/**
 * The tables a page shows before and after an action, from the same modules the REST contract and
 * MCP read: prices (`x-service-credits` of /v1/openapi.json), templates, languages, formats, and
 * what each error code means with what to do next (domain/advice.ts, also MCP's `next`).
 */
export const DashboardReference = z.object({
  prices: z.array(
    z.object({ operation: z.string(), endpoint: z.string(), credits: z.number().int(), per: z.string(), note: z.string().optional() }),
  ),
  analysisTemplates: z.array(z.string()),
  deliverableTemplates: z.record(z.string(), z.array(z.string())),
  deliverableLocales: z.array(z.string()),
  translationLanguages: z.array(z.object({ code: z.string(), name: z.string() })),
  transcriptFormats: z.array(z.string()),
  advice: z.object({
    noteFailures: z.record(z.string(), AdviceSchema).meta({ description: 'a failed note’s errorCode' }),
    unknownFailure: AdviceSchema.meta({ description: 'a failed note whose errorCode is not in noteFailures' }),
    refusals: z.record(z.string(), AdviceSchema).meta({ description: 'an answer’s error code (402, 409, 413, 429, ...)' }),
  }),
})
export type DashboardReference = z.infer<typeof DashboardReference>
