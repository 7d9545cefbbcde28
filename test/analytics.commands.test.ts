// Issue 14, item 6: "a test drives every command and fails if any message carries a field
// outside the allowlist". One service (test/support/service.ts: SQLite events sealed per note as
// in production, read models, workers) is driven through its REST API and the application
// facade (commands/application.ts) the way its users would: an account with an email, keys, a
// person who signs in and out and changes her password, folders, an imported note (its link
// carrying a credential) and an uploaded one through the real pipeline (espeak-ng speech, an
// OpenAI-compatible ASR server), edits, speakers, a text replacement, a translation, analyses,
// an outline, questions, a deliverable, voice consent and an enrolled voiceprint, webhooks with
// deliveries, an OAuth client's grant from code to revocation, a failed import, a deleted note
// and a plan change. Every event goes through the forwarder's mapping (toAnalyticsMessage),
// without and with every topic opted in to personal content; with KAFKA_BROKERS set the real
// forwarder runs along and what a consumer reads is checked too. The test fails on a field
// outside the allowlist, a message its schema rejects, or any secret, hash, credential or email
// the commands wrote (collected from the stored events themselves, not guessed), and reports
// how many of the published event types the commands produced.
import t, { type Test } from 'tap'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { createImport, dialogue, json, startAsrServer, waitForNote } from './support/pipeline.ts'
import { speakerModel } from './support/speech.ts'
import { schemaValidator } from './support/analytics.ts'
import { EVENT_FIELDS, METADATA_FIELDS, TOPICS, publishedTypes } from '../domain/analytics/contract.ts'
import { analyticsForwarder, toAnalyticsMessage, type ForwardedEvent } from '../projections/analyticsForwarder.ts'
import { openKafkaPublisher, readKafkaTopics } from '../adapters/kafka/kafkaPublisher.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { startProjection, type RunningProjection } from '../projections/runner.ts'
import type { RecordedEvent } from '../ports/eventStore.ts'
import { pollUntil } from './support/pollUntil.ts'
import { noteStream } from '../domain/notes/note.ts'
import { noteTranscriptDecider } from '../domain/notes/noteTranscript.ts'
import { ANY_SOURCE, type TranslationCapability } from '../domain/transcripts/translationPairs.ts'

const tmp = tempDir('analytics-commands-')
t.teardown(tmp.remove)
const run = randomUUID().slice(0, 8)
const mp3Bytes = await readFile(await dialogue(tmp.dir))
const asr = await startAsrServer(tmp.dir)
t.teardown(asr.close)
const web = await startHttpServer({
  '/talk.mp3': { body: mp3Bytes, headers: { 'content-type': 'audio/mpeg' } },
  '/gone.mp3': { status: 404 },
  '/hook': { status: 200, body: 'ok' },
})
t.teardown(web.close)

const s = await testService({
  workers: true,
  env: {
    IMPORT_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    ASR_BASE_URL: asr.baseUrl,
    JOB_POLL_MS: '20',
    JOB_PROGRESS_INTERVAL_MS: '20',
    JOB_BACKOFF_BASE_MS: '50',
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_RETRY_DELAYS_SECONDS: '0.05,0.1,0.1',
    // The local engine: English to Spanish it has, to German it has not (refused when requested;
    // a request another process took fails here: below).
    TRANSLATION_ENGINE: 'apertium',
    TRANSLATION_POLL_MS: '50',
    SPEAKER_EMBEDDING_MODEL: speakerModel(),
  },
})
t.teardown(s.close)


/** Plain values the commands were given or handed out: none may reach a topic. */
const secrets: string[] = []
/** Personal content the commands were given: only on opted-in topics. */
const PERSONAL = `PERSONAL-${run}`

t.test('given every command driven through the API and the facade, then no message carries a field outside the allowlist, every message validates, and no secret leaves', async (t) => {
  const app = s.services
  // With a broker: the real forwarder runs along, as in production, and publishes as the
  // commands go (a deleted note's events are published before they are shredded).
  const brokers = process.env.KAFKA_BROKERS?.split(',').filter(Boolean) ?? []
  const topicPrefix = `notes.events.cmds-${run}.`
  let forwarder: RunningProjection | null = null
  if (brokers.length > 0) {
    const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'forwarder.db') })
    t.teardown(() => docs.close())
    const publisher = await openKafkaPublisher({ brokers, clientId: 'analytics-commands' })
    t.teardown(() => publisher.close())
    forwarder = startProjection(analyticsForwarder(publisher, { topicPrefix }), { events: app.events, docs })
    t.teardown(() => forwarder?.stop())
  }
  const answers: string[] = []
  t.teardown(() => t.comment(`answers:\n${answers.join('\n')}`))
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, headers: Record<string, string>, body?: unknown, expect?: number) => {
    const r = await s.inject({ method, url, headers: { ...headers, ...(body !== undefined ? json : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) })
    if (expect !== undefined && r.statusCode !== expect) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`)
    answers.push(`${method} ${url.replace(/[0-9a-f-]{36}|[0-9A-Z]{26}/g, ':id')} ${r.statusCode}${r.statusCode >= 300 ? ` ${r.body.slice(0, 200)}` : ''}`)
    return r
  }

  // Accounts, keys, people, sessions.
  const email = `owner-${run}@example.com`
  const password = `pw-${run}-correct horse`
  secrets.push(email, password)
  const { accountId } = await app.accounts.openAccount({ name: `${PERSONAL} Acme`, email, plan: 'power' })
  const key = await app.accounts.createApiKey(accountId, `${PERSONAL} ci key`)
  const spare = await app.accounts.createApiKey(accountId, `${PERSONAL} spare`)
  secrets.push(key.apiKey, spare.apiKey)
  await app.accounts.revokeApiKey(accountId, spare.keyId)
  const headers = { authorization: `Bearer ${key.apiKey}` }
  await app.persons.register({ accountId, email, password, name: `${PERSONAL} Ada` })
  const signedIn = await app.persons.signIn(email, password, { userAgent: `agent-${run}` })
  if (!signedIn) throw new Error('sign-in refused')
  secrets.push(signedIn.token, `agent-${run}`)
  await app.persons.signOut(signedIn.token)
  await app.persons.setPassword(email, `${password}-2`)
  secrets.push(`${password}-2`)

  // Folders.
  const folder = (await call('POST', '/v1/folders', headers, { name: `${PERSONAL} Work` }, 201)).json()
  await call('PATCH', `/v1/folders/${folder.id}`, headers, { name: `${PERSONAL} Work 2` })
  const doomed = (await call('POST', '/v1/folders', headers, { name: `${PERSONAL} Tmp` }, 201)).json()
  await call('DELETE', `/v1/folders/${doomed.id}`, headers)

  // Webhooks: created before the notes, so their outcomes are delivered.
  const hookUrl = web.url(`/hook?token=url-secret-${run}`)
  secrets.push(`url-secret-${run}`)
  const hook = (await call('POST', '/v1/webhooks', headers, { url: hookUrl, events: ['note.ready', 'note.failed'] })).json()
  if (hook.secret) secrets.push(hook.secret)
  const rotated = (await call('POST', `/v1/webhooks/${hook.id}/rotate`, headers, {})).json()
  if (rotated?.secret) secrets.push(rotated.secret)

  // A note through the whole pipeline, and everything one does with a ready note.
  // The link carries a credential, as a presigned URL does: it must not leave, even opted in.
  const signature = `sig-secret-${run}`
  secrets.push(signature)
  const noteId = await createImport(s, headers, { audioUrl: `${web.url('/talk.mp3')}?X-Amz-Signature=${signature}`, title: `${PERSONAL} Weekly planning` })
  const { note } = await waitForNote(s, headers, noteId, 120_000)
  t.equal(note.status, 'ready', 'the imported note is ready')
  await call('PATCH', `/v1/notes/${noteId}`, headers, { title: `${PERSONAL} Renamed`, folderId: folder.id, tags: [`${PERSONAL}-tag`], description: `${PERSONAL} about planning` })
  // Charged reads: a pending charge, completed once the answer is made.
  await call('GET', `/v1/notes/${noteId}/transcript`, headers)
  await call('GET', `/v1/notes/${noteId}/clip?startMs=0&endMs=2000`, headers)
  await call('POST', `/v1/notes/${noteId}/transcript/replace`, headers, { find: 'Friday', replace: `${PERSONAL} Monday` })
  // Biometric consent is the owner's, given in the dashboard (an API key may not give it); with
  // it, naming a speaker of an uploaded note enrols a voiceprint (below).
  const owner = { accountId, plan: 'power' as const, keyId: null, requestId: `req-${run}-voice`, via: 'dashboard' as const }
  await app.voice.grantConsent(owner)
  await call('PATCH', `/v1/notes/${noteId}/speakers/A`, headers, { name: `${PERSONAL} Host` })
  await call('PATCH', `/v1/notes/${noteId}/speakers/B`, headers, { name: `${PERSONAL} Guest`, voiceExcluded: true })
  await call('POST', `/v1/notes/${noteId}/speakers/suggest`, headers, {})
  await call('POST', `/v1/notes/${noteId}/transcript/translation`, headers, { language: 'es' })
  // German is refused at once here (Apertium has no pair); a request taken by a process whose
  // engine could translate it (a chat model) fails in this worker: a TranslationFailed.
  const elsewhere: TranslationCapability = { engine: 'openai-compatible', model: 'm', pairs: [{ from: ANY_SOURCE, to: 'de' }], missingPairsHint: null }
  await app.handler.handle(noteStream.of(noteId), { type: 'RequestTranslation', accountId, language: 'de', requestId: `req-${run}-de`, capability: elsewhere, now: new Date().toISOString() }, noteTranscriptDecider)
  await call('POST', `/v1/notes/${noteId}/analysis`, headers, { template: 'meeting_minutes' })
  await call('GET', `/v1/notes/${noteId}/outline?generate=1`, headers)
  await call('POST', `/v1/notes/${noteId}/ask`, headers, { question: `${PERSONAL} when do we ship?` })
  await call('POST', '/v1/ask', headers, { question: `${PERSONAL} what about the budget?` })
  await call('POST', `/v1/notes/${noteId}/deliverables`, headers, { kind: 'email', template: 'follow_up', locale: 'en' })

  // An upload: created, the bytes PUT where the answer says, finalized; transcribed like the import.
  const created = (await call('POST', '/v1/notes', headers, { filename: `${PERSONAL} talk.mp3`, contentType: 'audio/mpeg', fileSizeBytes: mp3Bytes.length, title: `${PERSONAL} Upload` }, 202)).json()
  const target = new URL(created.upload.url)
  const put = await s.inject({ method: 'PUT', url: target.pathname + target.search, headers: created.upload.headers, payload: mp3Bytes })
  answers.push(`PUT /uploads/:id ${put.statusCode}`)
  await call('POST', `/v1/notes/${created.noteId}/finalize`, headers, {}, 202)
  await waitForNote(s, headers, created.noteId, 120_000)
  // Enrolment reads the uploaded audio: naming a speaker of the upload enrols a voiceprint.
  await call('PATCH', `/v1/notes/${created.noteId}/speakers/A`, headers, { name: `${PERSONAL} Host` })
  const profile = await pollUntil('a voiceprint enrolled', async () => (await app.voice.profiles(owner)).profiles.find((p) => p.hasVoiceprint), 120_000)
  await app.voice.setProfileExclusion(owner, profile.id, true)
  await app.voice.revokeConsent(owner)
  await call('PATCH', `/v1/notes/${created.noteId}`, headers, { keepAudio: false })

  // A free account: its imports count minutes.
  const free = await s.account('free')
  try {
    const freeNote = await createImport(s, free.headers, { audioUrl: web.url('/talk.mp3') })
    await waitForNote(s, free.headers, freeNote, 120_000)
  } catch (err) {
    answers.push(`free import: ${(err as Error).message.slice(0, 200)}`)
  }

  // A note that fails (the link answers 404): its hold goes back, the webhook hears of it.
  const failedId = await createImport(s, headers, { audioUrl: web.url('/gone.mp3') })
  await waitForNote(s, headers, failedId, 120_000)

  // An OAuth client (an AI assistant) through its whole grant.
  const redirectUri = 'http://127.0.0.1:9/callback'
  const client = await app.oauth.registerClient({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' })
  const verifier = randomBytes(48).toString('base64url')
  const checked = await app.oauth.checkAuthorizationRequest({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: app.settings.mcp.publicUrl,
  })
  if (!checked.ok) throw new Error(`authorization request refused: ${checked.description}`)
  const { redirect } = await app.oauth.approve(accountId, checked.request, { kind: 'api_key', keyId: key.keyId })
  const code = new URL(redirect).searchParams.get('code')!
  const presented = { basic: null, clientId: client.client_id, clientSecret: undefined }
  const tokens = await app.oauth.token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.client_id }, presented)
  const refreshed = await app.oauth.token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id }, presented)
  secrets.push(code, verifier, tokens.access_token, tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token!)
  await app.oauth.revoke({ token: refreshed.refresh_token! }, presented)
  await app.oauth.withdrawConsent(accountId, client.client_id)

  // Webhook deliveries settle; then the endpoint and the first note go.
  await pollUntil('webhook deliveries attempted', async () => {
    const all = await app.events.readAll({ maxCount: 1e6 })
    return all.filter((e) => e.type === 'WebhookDeliveryAttempted').length >= 2
  }, 60_000)
  // Both translations settle: one completed, one failed.
  await pollUntil('the translations settle', async () => {
    const types = (await app.events.readAll({ maxCount: 1e6 })).map((e) => e.type)
    return types.includes('TranslationFailed') && types.includes('TranslationCompleted')
  }, 60_000)
  // What the forwarder would have published by now: a deleted note's streams go with it.
  const beforeDeletion = await app.events.readAll({ maxCount: 1e6 })
  await forwarder?.waitFor(beforeDeletion[beforeDeletion.length - 1]!.globalPosition, 60_000)
  await call('DELETE', `/v1/webhooks/${hook.id}`, headers)
  await call('DELETE', `/v1/notes/${noteId}`, headers)
  await app.credits.changePlan(accountId, 'pro')

  // A deleted note's events read back as ContentShredded (its key is gone): the forwarder
  // published them as they were before, so those are the ones to check.
  const after = await app.events.readAll({ maxCount: 1e6 })
  const seen = new Set(beforeDeletion.map((e) => e.id))
  const stored = [...beforeDeletion, ...after.filter((e) => !seen.has(e.id))]
  t.pass(`${stored.length} events (${after.filter((e) => e.type === 'ContentShredded').length} of them shredded since with the deleted note)`)
  // Every hash, secret and email the commands wrote, read back from the events themselves.
  const secretKey = /hash|secret|email|token|password|challenge|personId|prefix|url|redirectUri|userAgent/i
  const collect = (v: unknown, key: string | null) => {
    if (typeof v === 'string') {
      if (key && secretKey.test(key) && v.length >= 8) secrets.push(v)
      if (/^[^@\s]+@[^@\s]+\.[a-z]+$/i.test(v)) secrets.push(v)
    } else if (Array.isArray(v)) v.forEach((x) => collect(x, key))
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) collect(x, k)
  }
  for (const e of stored) collect(e.data, null)
  t.ok(secrets.length > 20, `${secrets.length} secret values the commands wrote or were given`)

  checkMessages(t, stored)

  if (forwarder) {
    await forwarder.waitFor(after[after.length - 1]!.globalPosition, 60_000)
    await forwarder.stop()
    const expected = stored.map((e) => toAnalyticsMessage(e, topicPrefix)).filter((m) => m !== null)
    const messages = await readKafkaTopics({ brokers, clientId: 'analytics-commands', topics: [...new Set(expected.map((m) => m.topic))] })
    t.same(messages.map((m) => m.headers['event-id']).sort(), expected.map((m) => m.headers!['event-id']).sort(), `through Kafka: ${messages.length} messages consumed, one per published event`)
    const validate = schemaValidator()
    t.same(messages.flatMap((m) => validate(JSON.parse(m.value!)).map((e) => `${m.headers['event-type']}: ${e}`)), [], 'through Kafka: every consumed message validates against its schema')
    const serialized = messages.map((m) => JSON.stringify(m)).join('\n')
    t.same([...new Set(secrets.filter((x) => serialized.includes(x)))], [], 'through Kafka: no secret in any consumed message')
    t.notOk(serialized.includes(PERSONAL), 'through Kafka: no personal content')
  }
})

/** Maps every stored event as the forwarder does and checks the messages. */
function checkMessages(t: Test, stored: RecordedEvent[]) {
  const validate = schemaValidator()
  const allTopics = new Set(Object.keys(TOPICS))
  for (const [label, personal] of [['no topic opted in', new Set<string>()], ['every topic opted in to personal content', allTopics]] as const) {
    const messages = stored.map((e) => toAnalyticsMessage(e, 'notes.events.', personal)).filter((m) => m !== null)
    let outside = 0
    let invalid = 0
    for (const m of messages) {
      const v = JSON.parse(m.value) as ForwardedEvent
      const extra = [
        ...Object.keys(v.data).filter((k) => !(k in (EVENT_FIELDS as Record<string, object>)[v.type]!)).map((k) => `data.${k}`),
        ...Object.keys(v.metadata).filter((k) => !(k in METADATA_FIELDS)).map((k) => `metadata.${k}`),
      ]
      if (extra.length > 0 && outside++ < 5) t.fail(`${v.type}: fields outside the allowlist (${label})`, { extra })
      const errors = validate(v)
      if (errors.length > 0 && invalid++ < 5) t.fail(`${v.type} validates against its schema (${label})`, { errors })
    }
    t.equal(outside, 0, `${label}: no message carries a field outside the allowlist (${messages.length} messages)`)
    t.equal(invalid, 0, `${label}: every message validates against contract/analytics/<type>.schema.json`)
    const serialized = messages.map((m) => `${m.key}\n${m.value}\n${JSON.stringify(m.headers)}`).join('\n')
    t.same([...new Set(secrets.filter((x) => serialized.includes(x)))], [], `${label}: no secret, hash, token, credential or email in any key, value or header`)
    if (personal.size === 0) t.notOk(serialized.includes(PERSONAL), `${label}: no personal content`)
    else t.ok(serialized.includes(PERSONAL), `${label}: personal content is published (the opt-in works)`)
  }
  const produced = new Set(stored.map((e) => e.type))
  const published = publishedTypes()
  const covered = published.filter((type) => produced.has(type))
  const missing = published.filter((type) => !produced.has(type))
  t.comment(`coverage: ${covered.length} of ${published.length} published event types produced by real commands; not produced here: ${missing.join(', ')}`)
  t.ok(covered.length >= 55, `at least 55 published types produced by commands (${covered.length})`)
}
