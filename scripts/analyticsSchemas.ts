// Writes the JSON Schema of every published analytics event type to contract/analytics/
// (`npm run analytics-schemas`). The schemas are generated from the TypeScript types the events
// are written with: ts-json-schema-generator reads `Published` (the union of the published
// events' types), `ForwardedEvent` (the message envelope) and `PublishedMetadata` from
// domain/analytics/contract.ts, and each event's `data` schema is then cut down to the fields the
// allowlist (`EVENT_FIELDS`) lets out. Personal fields stay in the schema but are never required:
// they are present only on topics an operator opted in.
//
// The files are committed: they are what consumers read; test/analytics.contract.test.ts fails
// when they differ from what this script writes (so a changed event type fails the suite until
// its schema is regenerated and the change is a deliberate one: bump ANALYTICS_SCHEMA_VERSION).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createGenerator } from 'ts-json-schema-generator'
import { ANALYTICS_SCHEMA_VERSION, METADATA_FIELDS, TOPICS, fieldsOf, publishedTypes, type PublishedType } from '../domain/analytics/contract.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const SCHEMA_DIR = join(ROOT, 'contract', 'analytics')
const CONTRACT = join(ROOT, 'domain', 'analytics', 'contract.ts')

type Json = Record<string, unknown>

const PERSONAL = 'personal content: present only on topics opted in with ANALYTICS_PERSONAL_TOPICS'

/**
 * A type with one value is `const`, whichever way the generator spells it (its versions differ:
 * `enum: [x]` for a one-element tuple's `[number]`), so the committed files do not change with it.
 */
function oneValueAsConst(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(oneValueAsConst)
  if (!v || typeof v !== 'object') return v
  const out: Json = {}
  for (const [k, x] of Object.entries(v)) {
    if (k === 'enum' && Array.isArray(x) && x.length === 1) out.const = x[0]
    else out[k] = oneValueAsConst(x)
  }
  return out
}

/** The generator's view of the contract's types: one TypeScript program, read once. */
export function generateTypeSchemas(): { events: Map<string, Json>; envelope: Json; metadata: Json } {
  const generator = createGenerator({
    path: CONTRACT,
    tsconfig: join(ROOT, 'tsconfig.json'),
    expose: 'none',
    topRef: false,
    jsDoc: 'extended',
    additionalProperties: false,
    sortProps: true,
    // tsc checks the project; here only the shapes are needed (and this is 10x faster).
    skipTypeCheck: true,
  })
  const strip = (schema: Json): Json => {
    const { $schema: _s, definitions, ...rest } = schema
    if (definitions && Object.keys(definitions).length > 0) throw new Error('a published type is recursive or named in a way the inlined schemas cannot express; extend scripts/analyticsSchemas.ts')
    return oneValueAsConst(rest) as Json
  }
  const union = strip(generator.createSchema('Published') as Json)
  const events = new Map<string, Json>()
  for (const member of (union.anyOf as Json[] | undefined) ?? []) {
    const props = member.properties as { type?: { const?: string }; data?: Json } | undefined
    const type = props?.type?.const
    if (!type || !props?.data) throw new Error(`a member of Published has no literal type or no data: ${JSON.stringify(member).slice(0, 200)}`)
    if (events.has(type)) throw new Error(`two event types named ${type} in Published`)
    events.set(type, props.data)
  }
  return { events, envelope: strip(generator.createSchema('ForwardedEvent') as Json), metadata: strip(generator.createSchema('PublishedMetadata') as Json) }
}

/** An object schema with only the allowlisted properties; personal ones optional and marked. */
function allowlisted(schema: Json, fields: Readonly<Record<string, string>>, what: string): Json {
  const properties = (schema.properties ?? {}) as Record<string, Json>
  const required = new Set((schema.required ?? []) as string[])
  const out: Record<string, Json> = {}
  for (const [name, visibility] of Object.entries(fields)) {
    const property = properties[name]
    if (!property) throw new Error(`${what}.${name} is allowlisted but not in the type`)
    out[name] = visibility === 'personal' ? { ...property, description: property.description ? `${String(property.description)} (${PERSONAL})` : PERSONAL } : property
  }
  return {
    type: 'object',
    properties: out,
    required: Object.keys(fields).filter((name) => fields[name] === 'public' && required.has(name)),
    additionalProperties: false,
  }
}

/** The JSON Schema (draft 2020-12) of each published event type's message value. */
export function analyticsSchemas(types = generateTypeSchemas()): Map<PublishedType, Json> {
  const envelopeProps = types.envelope.properties as Record<string, Json>
  const out = new Map<PublishedType, Json>()
  for (const type of publishedTypes()) {
    const data = types.events.get(type)
    if (!data) throw new Error(`${type} is allowlisted but not a member of Published`)
    const topics = Object.entries(TOPICS).filter(([, list]) => list.includes(type)).map(([c]) => c)
    out.set(type, {
      ...types.envelope,
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: `https://notes-service.invalid/contract/analytics/${type}.schema.json`,
      title: `${type} (analytics schema version ${ANALYTICS_SCHEMA_VERSION})`,
      description: `Value of a ${type} message on the topic(s) <prefix>${topics.join(', <prefix>')}. Headers: event-id (dedup key), event-type, schema-version.`,
      properties: {
        ...envelopeProps,
        schemaVersion: { ...envelopeProps.schemaVersion, const: ANALYTICS_SCHEMA_VERSION },
        type: { ...envelopeProps.type, const: type },
        data: { description: envelopeProps.data?.description, ...allowlisted(data, fieldsOf(type)!, type) },
        metadata: allowlisted(types.metadata, METADATA_FIELDS, 'metadata'),
      },
    })
  }
  return out
}

/** File name -> content, for every published event type. */
export function analyticsSchemaFiles(): Map<string, string> {
  return new Map([...analyticsSchemas()].map(([type, schema]) => [`${type}.schema.json`, JSON.stringify(schema, null, 2) + '\n']))
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  mkdirSync(SCHEMA_DIR, { recursive: true })
  const files = analyticsSchemaFiles()
  for (const old of readdirSync(SCHEMA_DIR)) if (old.endsWith('.schema.json') && !files.has(old)) rmSync(join(SCHEMA_DIR, old))
  for (const [name, text] of files) writeFileSync(join(SCHEMA_DIR, name), text)
  console.log(`wrote ${files.size} schemas to ${SCHEMA_DIR}`)
}
