// The analytics topics' contract without a broker: the committed JSON Schemas are what
// `npm run analytics-schemas` writes, the allowlist names no secret, and the message built for
// one event of every type carries only allowlisted fields, validates against its schema, and
// carries personal content only on opted-in topics. test/kafka.forwarder.test.ts does the same
// through a real broker.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { ANALYTICS_SCHEMA_VERSION, EVENT_FIELDS, METADATA_FIELDS, TOPICS } from '../domain/analytics/contract.ts'
import { toAnalyticsMessage } from '../projections/analyticsForwarder.ts'
import { analyticsSchemaFiles, SCHEMA_DIR } from '../scripts/analyticsSchemas.ts'
import type { RecordedEvent } from '../ports/eventStore.ts'
import { newRun, sampleEvents, schemaValidator, SECRET_FIELDS } from './support/analytics.ts'

const recorded = (e: { stream: string; type: string; data: Record<string, unknown> }, i: number): RecordedEvent => ({
  id: randomUUID(),
  type: e.type,
  streamName: e.stream,
  revision: 0,
  globalPosition: i + 1,
  recordedAt: new Date().toISOString(),
  data: e.data,
  metadata: { requestId: 'req-1', accountId: 'acc-secret-metadata', actor: 'x' },
})

t.test('the committed schemas are the generated ones (run `npm run analytics-schemas` after changing the contract)', async (t) => {
  const generated = analyticsSchemaFiles()
  const committed = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json')).sort()
  t.same(committed, [...generated.keys()].sort(), 'one file per published event type, no other')
  for (const [name, text] of generated) t.equal(readFileSync(join(SCHEMA_DIR, name), 'utf8'), text, `${name} is up to date`)
})

t.test('the allowlist names no secret, hash, credential or email field', async (t) => {
  const forbidden = /hash|secret|password|token|email|credential|challenge|personId/i
  const listed = Object.entries(EVENT_FIELDS).flatMap(([type, fields]) => Object.keys(fields).map((f) => `${type}.${f}`))
  t.same(listed.filter((f) => forbidden.test(f.split('.')[1]!)), [], 'no listed field is named like a secret')
  t.same(Object.keys(METADATA_FIELDS), ['requestId'], 'metadata: only the request id')
})

t.test('given one event of every type, then each message carries only allowlisted fields, validates against its schema, and no secret', async (t) => {
  const run = newRun()
  const validate = schemaValidator()
  const events = sampleEvents(run).map(recorded)
  const messages = events.map((e) => toAnalyticsMessage(e)).filter((m) => m !== null)
  t.equal(messages.length, Object.values(TOPICS).flat().length, 'one message per (topic, published type); unpublished types none')
  t.same([...new Set(Object.values(TOPICS).flat())].sort(), Object.keys(EVENT_FIELDS).sort(), 'every listed event type is on a topic')
  for (const m of messages) {
    const value = JSON.parse(m.value) as { type: string; schemaVersion: number; data: Record<string, unknown> }
    t.same(validate(value), [], `${value.type}: valid against contract/analytics/${value.type}.schema.json`)
    t.equal(value.schemaVersion, ANALYTICS_SCHEMA_VERSION, `${value.type}: schemaVersion field`)
    t.equal(m.headers?.['schema-version'], String(ANALYTICS_SCHEMA_VERSION), `${value.type}: schema-version header`)
    t.same(Object.keys(value.data).filter((k) => !(k in EVENT_FIELDS[value.type as keyof typeof EVENT_FIELDS])), [], `${value.type}: no field outside the allowlist`)
  }
  const all = messages.map((m) => `${m.key} ${m.value} ${JSON.stringify(m.headers)}`).join('\n')
  t.notOk(all.includes(`SECRET-${run}`), 'no secret-field marker in any message')
  t.notOk(all.includes(`leak-${run}@`), 'no email in any message')
  t.notOk(all.includes(`PERSONAL-${run}`), 'no personal content without an opt-in')
  t.notOk(all.includes('acc-secret-metadata'), 'no unlisted metadata')
  t.ok(SECRET_FIELDS.length > 10)
})

t.test('given the note and ask topics opted in, then their personal fields are published and other topics still carry none', async (t) => {
  const run = newRun()
  const validate = schemaValidator()
  const personal = new Set(['note', 'ask'])
  const messages = sampleEvents(run).map(recorded).map((e) => toAnalyticsMessage(e, 'p.', personal)).filter((m) => m !== null)
  const onTopic = (topic: string) => messages.filter((m) => m.topic === topic).map((m) => m.value).join('\n')
  t.ok(onTopic('p.note').includes(`PERSONAL-${run}-NoteTranscribed-transcript`), 'the transcript is on the opted-in note topic')
  t.ok(onTopic('p.ask').includes(`PERSONAL-${run}-QuestionAnswered-question`), 'the question is on the opted-in ask topic')
  t.notOk(onTopic('p.folder').includes(`PERSONAL-${run}`), 'the folder topic (not opted in) has no personal content')
  t.notOk(messages.map((m) => m.value).join('\n').includes(`SECRET-${run}`), 'opting in never lets a secret out')
  for (const m of messages) t.same(validate(JSON.parse(m.value)), [], `${m.topic}: valid with personal fields too`)
})
