// Helpers for the analytics-contract tests: one event of every type, with every allowlisted
// field filled from the contract and every field the contract keeps inside set to a marker that
// must never reach a topic; and a validator of messages against the committed JSON Schemas.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { EVENT_FIELDS, TOPICS, publishedTypes, type PublishedType, type Visibility } from '../../domain/analytics/contract.ts'
import { SCHEMA_DIR } from '../../scripts/analyticsSchemas.ts'

/** Fields the domain events carry that the contract keeps inside (secrets, hashes, emails, ids derived from emails, internals). */
export const SECRET_FIELDS = [
  'email', 'passwordHash', 'secretHash', 'codeHash', 'codeChallenge', 'accessTokenHash', 'refreshTokenHash', 'previousRefreshTokenHash',
  'secret', 'url', 'sourceUrl', 'prefix', 'personId', 'payload', 'responseExcerpt', 'blobKey', 'redirectUri', 'userAgent', 'message', 'error',
] as const

/** Event types on no topic: published nowhere, whatever they carry. */
export const UNPUBLISHED_TYPES = ['PersonRegistered', 'PersonPasswordChanged', 'OAuthClientRegistered', 'ApiKeyUsed', 'NoteUploadReceived', 'NoteSourceMetadataRecorded', 'SpeakerNamesSuggested', 'SpeakerVoiceMatched', 'TranslationSegmentsTranslated', 'WebhookDeliveryScheduledUnknown']

type Schema = { type?: string | string[]; const?: unknown; enum?: unknown[]; anyOf?: Schema[]; items?: Schema; properties?: Record<string, Schema>; required?: string[]; format?: string }

/** A value valid against a generated data schema: strings are `marker`, every property filled. */
function sampleOf(schema: Schema, marker: string): unknown {
  if (schema.const !== undefined) return schema.const
  if (schema.enum) return schema.enum[0]
  if (schema.anyOf) return sampleOf(schema.anyOf.find((s) => s.type !== 'null') ?? schema.anyOf[0]!, marker)
  const type = [schema.type ?? 'object'].flat().find((t) => t !== 'null')
  switch (type) {
    case 'string': return schema.format === 'date-time' ? new Date().toISOString() : marker
    case 'integer': return 7
    case 'number': return 1.5
    case 'boolean': return true
    case 'array': return [sampleOf(schema.items ?? { type: 'string' }, marker)]
    default: return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sampleOf(v, marker)]))
  }
}

/** The committed schema of a published type's `data`. */
export const dataSchemaOf = (type: PublishedType): Schema =>
  (JSON.parse(readFileSync(join(SCHEMA_DIR, `${type}.schema.json`), 'utf8')) as { properties: { data: Schema } }).properties.data

export interface SampleEvent {
  stream: string
  type: string
  data: Record<string, unknown>
}

/**
 * One event per published type on a stream of each topic that carries it, plus the unpublished
 * types on a `person` stream. Personal fields hold `PERSONAL-<run>-...`, secrets `SECRET-<run>-...`
 * and a `leak-<run>@example.com` email.
 */
export function sampleEvents(run: string): SampleEvent[] {
  const out: SampleEvent[] = []
  const secrets = (type: string) => Object.fromEntries(SECRET_FIELDS.map((f) => [f, f === 'email' ? `leak-${run}@example.com` : `SECRET-${run}-${type}-${f}`]))
  for (const [category, types] of Object.entries(TOPICS)) {
    for (const type of types) {
      const data: Record<string, unknown> = { ...secrets(type) }
      const properties = dataSchemaOf(type).properties ?? {}
      for (const [field, visibility] of Object.entries(EVENT_FIELDS[type] as Record<string, Visibility>)) {
        const marker = visibility === 'public' ? (field === 'at' || field.endsWith('At') ? new Date().toISOString() : `public-${field}`) : `PERSONAL-${run}-${type}-${field}`
        data[field] = sampleOf(properties[field]!, marker)
      }
      out.push({ stream: `${category}-${run}`, type, data })
    }
  }
  for (const type of UNPUBLISHED_TYPES) out.push({ stream: `person-${run}`, type, data: { ...secrets(type), name: `PERSONAL-${run}-${type}-name` } })
  return out
}

/** Validates a message value against contract/analytics/<type>.schema.json; returns the errors (empty when valid). */
export function schemaValidator(): (value: unknown) => string[] {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true })
  ;(addFormats as unknown as (a: Ajv2020) => void)(ajv)
  const validators = new Map(publishedTypes().map((type) => [type, ajv.compile(JSON.parse(readFileSync(join(SCHEMA_DIR, `${type}.schema.json`), 'utf8')))]))
  return (value) => {
    const type = (value as { type?: string } | null)?.type
    const validate = type ? validators.get(type as never) : undefined
    if (!validate) return [`no schema for type ${String(type)}`]
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)
  }
}

export const newRun = () => randomUUID().slice(0, 8)
