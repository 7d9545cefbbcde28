// GET /v1/openapi.json: a valid OpenAPI 3.1 document, generated from the route definitions, that
// lists every route the app serves and nothing else, with the prices and deliverable templates.
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testService } from './support/service.ts'
import { PRICES } from '../domain/credits/prices.ts'

t.test('the contract document', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const r = await s.inject({ method: 'GET', url: '/v1/openapi.json' })
  t.equal(r.statusCode, 200)
  const doc = r.json()

  t.test('is valid OpenAPI 3.1, version 1.0.0', async (t) => {
    const validator = new Validator()
    const result = await validator.validate(doc)
    t.same(result.errors ?? [], [], 'no validation errors')
    t.equal(result.valid, true)
    t.equal(doc.openapi, '3.1.0')
    t.equal(validator.version, '3.1')
    t.equal(doc.info.version, '1.0.0')
  })

  t.test('lists every route of the app and nothing else', async (t) => {
    // Routes as fastify serves them (HEAD twins of GET left out). The MCP transport and the OAuth
    // documents have contracts of their own, outside the REST one; the web dashboard (/app, its
    // session-only JSON under /app/api, the favicon) is not part of the REST API either.
    const served = s.app.servedRoutes
      .filter((r) => !r.url.startsWith('/mcp') && !r.url.startsWith('/.well-known') && !r.url.startsWith('/oauth') && !r.url.startsWith('/app') && r.url !== '/favicon.ico')
      .map((r) => `${r.method} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`)
    const inDoc: string[] = []
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) for (const m of Object.keys(ops)) inDoc.push(`${m.toUpperCase()} ${path}`)
    t.ok(served.length >= 10, `${served.length} routes served`)
    t.same([...inDoc].sort(), [...served].sort())
  })

  t.test('every priced operation with its cost, and the deliverable templates', async (t) => {
    t.same(doc['x-service-credits'], Object.values(PRICES))
    t.same(doc['x-service-credits'].map((p: { endpoint: string; credits: number }) => [p.endpoint, p.credits]), [
      ['POST /v1/notes (audioUrl)', 50],
      ['GET /v1/notes/{id}/transcript', 1],
      ['POST /v1/notes/{id}/analysis', 100],
      ['GET /v1/notes/{id}/outline?generate=1', 50],
      ['POST /v1/notes/{id}/ask', 10],
      ['POST /v1/ask', 10],
      ['POST /v1/notes/{id}/transcript/translation', 0],
      ['POST /v1/notes/{noteId}/deliverables', 300],
      ['MCP extract_clip', 5],
    ])
    t.same(doc['x-service-deliverable-templates'], {
      email: ['follow_up', 'recap', 'next_steps', 'thank_you'],
      document: ['project_brief', 'meeting_recap', 'fiscal_revision', 'legal_acta', 'medical_consult'],
      slides: ['exec_summary', 'kickoff', 'recap_visual', 'sales_pitch_es'],
      locales: ['es', 'en'],
    })
    t.equal(doc.paths['/v1/notes'].post['x-service-credits'], 50)
  })

  t.test('documents the errors of each route, and marks the extensions', async (t) => {
    const create = doc.paths['/v1/notes'].post
    t.same(Object.keys(create.responses).sort(), ['202', '400', '401', '402', '403', '404', '409', '413', '415', '429'])
    t.match(create.responses['409'].description, /invalid_state/)
    t.match(create.description, /Idempotency-Key.*409 `invalid_state` \(extension\)/, 'the 409 is the Idempotency-Key extension, and the operation says so')
    t.match(create.responses['402'].description, /insufficient_credits.*balance.*required/)
    t.same(Object.keys(doc.paths['/v1/notes/{id}/finalize'].post.responses).sort(), ['202', '400', '401', '402', '403', '404', '409', '413', '415', '429'])
    t.equal(doc.paths['/v1/folders'].get['x-service-extension'], true)
    t.equal(doc.paths['/v1/notes/{id}'].patch['x-service-extension'], true)
    t.notOk(doc.paths['/v1/notes/{id}'].get['x-service-extension'])
    t.same(doc.paths['/v1/openapi.json'].get.security, [])
    t.ok(doc.components.schemas.Note && doc.components.schemas.Error && doc.components.schemas.CreateNoteRequest)
  })

  t.test('states what the server checks (issue 17, item 3)', async (t) => {
    const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, m]) => Object.entries(m).map(([method, op]) => ({ path, method, op })))
    for (const { path, method, op } of ops) {
      t.ok(op.responses['404'], `${method} ${path} declares 404`)
      t.ok(op.responses['400'], `${method} ${path} declares 400 (a malformed request)`)
    }
    const schema = (ref: { $ref: string }) => doc.components.schemas[ref.$ref.split('/').pop()!]
    const param = (path: string, method: string, name: string) => doc.paths[path][method].parameters.find((p: { name: string }) => p.name === name)
    t.same(param('/v1/notes', 'get', 'limit').schema, { type: 'integer', minimum: 1, maximum: 100, default: 20 })
    t.same(param('/v1/notes', 'get', 'status').schema.enum, ['processing', 'ready', 'failed'])
    t.match(param('/v1/notes', 'get', 'origin'), { style: 'form', explode: false, schema: { type: 'array', items: { enum: ['videosite', 'podcast', 'link', 'video', 'audio', 'recording'] } } })
    t.same(param('/v1/notes/{id}/transcript', 'get', 'format').schema.enum, ['json', 'txt', 'srt', 'vtt', 'md'])
    t.same(param('/v1/notes/{id}/transcript', 'get', 'translation').schema.enum, ['es', 'en', 'de', 'fr', 'it', 'pt'])
    t.same(param('/v1/notes/{id}/transcript/translation', 'get', 'language').schema.enum, ['es', 'en', 'de', 'fr', 'it', 'pt'])
    t.match(param('/v1/notes/{id}/clip', 'get', 'endMs'), { schema: { type: 'integer' }, description: /greater than startMs/ })

    const create = schema(doc.paths['/v1/notes'].post.requestBody.content['application/json'].schema)
    t.match(create.properties.audioUrl, { format: 'uri', maxLength: 2000 })
    t.match(create.properties.contentType, { maxLength: 100, pattern: /\[Aa\]\[Uu\]\[Dd\]\[Ii\]\[Oo\]/ })
    t.same(create.oneOf.map((s: { required: string[] }) => s.required), [['audioUrl'], ['filename', 'contentType']])
    const patch = schema(doc.paths['/v1/notes/{id}'].patch.requestBody.content['application/json'].schema)
    t.equal(patch.minProperties, 1)
    const deliverable = schema(doc.paths['/v1/notes/{noteId}/deliverables'].post.requestBody.content['application/json'].schema)
    t.same(
      Object.fromEntries(deliverable.oneOf.map((s: any) => [s.properties.kind.const, s.properties.template.enum])),
      { email: ['follow_up', 'recap', 'next_steps', 'thank_you'], document: ['project_brief', 'meeting_recap', 'fiscal_revision', 'legal_acta', 'medical_consult'], slides: ['exec_summary', 'kickoff', 'recap_visual', 'sales_pitch_es'] },
    )
    t.equal(doc.paths['/v1/notes/{id}/finalize'].post.requestBody.required, false, 'finalize body optional')
    t.equal(doc.paths['/v1/notes/{id}/transcript/translation'].post.requestBody.required, false, 'translation body optional')
    t.equal(doc.paths['/v1/notes'].post.requestBody.required, true)
    t.ok(doc.paths['/v1/voice-profiles/consent'].post.responses['400'], 'a malformed consent body is a declared 400')
    t.ok(doc.paths['/v1/notes/{id}'].get.responses['404'])
  })

  t.test('declares the Idempotency-Key header on every authenticated write, as the server checks it', async (t) => {
    const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, m]) => Object.entries(m).map(([method, op]) => ({ path, method, op })))
    const writes = ops.filter(({ method, op }) => method !== 'get' && !(Array.isArray(op.security) && op.security.length === 0))
    t.ok(writes.length >= 15, `${writes.length} authenticated writes`)
    for (const { path, method, op } of ops) {
      const header = op.parameters.find((p: { name: string; in: string }) => p.in === 'header' && p.name === 'Idempotency-Key')
      if (!writes.some((w) => w.op === op)) {
        t.notOk(header, `${method} ${path}: no Idempotency-Key (not an authenticated write)`)
        continue
      }
      t.match(header, { required: false, description: /retried request applies/, schema: { type: 'string', pattern: '^[!-~]{1,200}$' } }, `${method} ${path} declares it`)
      t.match(op.responses['400'].description, /invalid_request/, `${method} ${path}: a malformed key is a declared 400 invalid_request`)
    }
    // What the pattern says is what the server takes: a key it declares valid passes the check,
    // one it declares invalid is refused before the operation runs.
    const pattern = new RegExp(writes[0]!.op.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key').schema.pattern)
    const body = { filename: 'a.wav', contentType: 'audio/wav' }
    const { headers } = await s.account('pro')
    for (const key of ['k', '~!x-1', 'a'.repeat(200), '', 'a b', 'a'.repeat(201), 'clé']) {
      const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...headers, 'idempotency-key': key }, payload: body })
      t.equal(r.statusCode, pattern.test(key) ? 202 : 400, `key ${JSON.stringify(key.slice(0, 12))}${key.length > 12 ? '…' : ''} (${key.length} chars): ${r.body.slice(0, 120)}`)
      if (!pattern.test(key)) t.equal(r.json().error, 'invalid_request')
    }
  })

  t.test('openapi-spec-validator (PyPI) accepts it', async (t) => {
    // Installed with schemathesis by scripts/system-deps.sh (the README's test command).
    const python = join(import.meta.dirname, '..', '.ci', 'schemathesis', 'bin', 'python')
    const file = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json')
    writeFileSync(file, JSON.stringify(doc))
    const r = spawnSync(python, ['-m', 'openapi_spec_validator', file], { encoding: 'utf8' })
    t.equal(r.error, undefined, 'the validator runs (bash scripts/system-deps.sh installs it)')
    t.equal(r.status, 0, `${r.stdout}${r.stderr}`.trim().slice(0, 2000))
    t.match(r.stdout, /OK/)
  })
})
