// Given/when/then specs, on the shared DeciderSpecification (test/support/decider.ts), for the
// deciders that had none elsewhere: folders, accounts, API keys, webhook endpoints and deliveries,
// the transcript (replace, speakers, voice matches, metadata), OAuth clients, the demo seeder.
// The other deciders' specs live beside their features (test/*decider*.test.ts, credits.ledger,
// domain.analysis, oauth.grant, dashboard.domain, transcripts.translation, voice).
import t from 'tap'
import { DeciderSpecification } from './support/decider.ts'
import { folderDecider, type FolderEvent } from '../domain/folders/folder.ts'
import { accountDecider, type AccountEvent } from '../domain/accounts/account.ts'
import { apiKeyDecider, type ApiKeyCommand, type ApiKeyEvent } from '../domain/accounts/apiKey.ts'
import { webhookEndpointDecider, signingSecrets, type WebhookEndpointCommand, type WebhookEndpointEvent } from '../domain/webhooks/endpoint.ts'
import { webhookDeliveryDecider, type WebhookDeliveryCommand, type WebhookDeliveryEvent } from '../domain/webhooks/delivery.ts'
import { noteTranscriptDecider, evolveNoteTranscript, type TranscriptCommand, type TranscriptEvent } from '../domain/notes/noteTranscript.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import type { Transcript } from '../domain/notes/transcript.ts'
import { oauthClientDecider, type ClientRegistration } from '../domain/oauth/client.ts'
import { demoNoteDecider, demoNoteEvents, DEMO_NOTES } from '../domain/demo/dataset.ts'

const at = '2026-03-01T10:00:00.000Z'
const later = '2026-03-02T10:00:00.000Z'

t.test('folder decider', async (t) => {
  const folder = DeciderSpecification.for(folderDecider)
  const created: FolderEvent = { type: 'FolderCreated', data: { folderId: 'f1', accountId: 'a1', name: 'Calls', at } }
  folder.given([]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a1', name: 'Calls', now: at }).then(t, [created])
  folder.given([created]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a1', name: 'Calls', now: later }).thenNothingHappened(t, 'creating it again is a retry')
  folder.given([created]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a2', name: 'Mine', now: later }).thenThrows(t, 'conflict')
  folder.given([created]).when({ type: 'RenameFolder', accountId: 'a1', name: 'Clients', now: later }).then(t, [{ type: 'FolderRenamed', data: { name: 'Clients', at: later } }])
  folder.given([created]).when({ type: 'RenameFolder', accountId: 'a1', name: 'Calls', now: later }).thenNothingHappened(t, 'the same name changes nothing')
  folder.given([created]).when({ type: 'RenameFolder', accountId: 'a2', name: 'Stolen', now: later }).thenThrows(t, 'not_found', /belongs to you/)
  folder.given([]).when({ type: 'RenameFolder', accountId: 'a1', name: 'x', now: later }).thenThrows(t, 'not_found')
  const deleted: FolderEvent = { type: 'FolderDeleted', data: { at: later } }
  folder.given([created]).when({ type: 'DeleteFolder', accountId: 'a1', now: later }).then(t, [deleted])
  folder.given([created, deleted]).when({ type: 'DeleteFolder', accountId: 'a1', now: later }).thenNothingHappened(t, 'deleting twice is a retry')
  folder.given([created, deleted]).when({ type: 'DeleteFolder', accountId: 'a2', now: later }).thenThrows(t, 'not_found', /belongs to you/)
  folder.given([created, deleted]).when({ type: 'RenameFolder', accountId: 'a1', name: 'Back', now: later }).thenThrows(t, 'not_found')
  folder.given([created]).when({ type: 'DeleteFolder', accountId: 'a2', now: later }).thenThrows(t, 'not_found')
})

t.test('account decider', async (t) => {
  const account = DeciderSpecification.for(accountDecider)
  const opened: AccountEvent = { type: 'AccountOpened', data: { accountId: 'a1', name: 'Acme', email: null, at } }
  account.given([]).when({ type: 'OpenAccount', accountId: 'a1', name: 'Acme', email: null, now: at }).then(t, [opened])
  account.given([opened]).when({ type: 'OpenAccount', accountId: 'a1', name: 'Acme', email: null, now: later }).thenNothingHappened(t, 'opening twice is a retry')
  account.given([opened]).when({ type: 'RenameAccount', name: 'Acme Ltd', now: later }).then(t, [{ type: 'AccountRenamed', data: { name: 'Acme Ltd', at: later } }])
  account.given([opened]).when({ type: 'RenameAccount', name: 'Acme', now: later }).thenNothingHappened(t)
  account.given([]).when({ type: 'RenameAccount', name: 'Ghost', now: later }).thenThrows(t, 'not_found')
})

t.test('the specification itself fails a wrong expectation', async (t) => {
  const failures: string[] = []
  const probe = { same: (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b) || failures.push('same'), fail: () => failures.push('fail'), equal: (a: unknown, b: unknown) => a === b || failures.push('equal') }
  const folder = DeciderSpecification.for(folderDecider)
  folder.given([]).when({ type: 'RenameFolder', accountId: 'a1', name: 'x', now: at }).thenThrows(probe, 'conflict')
  folder.given([]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a1', name: 'x', now: at }).thenThrows(probe, 'not_found')
  folder.given([]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a1', name: 'x', now: at }).thenNothingHappened(probe)
  const account = DeciderSpecification.for(accountDecider)
  const open = { type: 'OpenAccount', accountId: 'a1', name: 'Acme', email: null, now: at } as const
  const recording = { ...probe, match: (a: unknown, p: unknown) => (a as { type: string }[])[0]?.type === (p as { type: string }[])[0]?.type || failures.push('match') }
  account.given([]).when(open).thenMatches(recording, [{ type: 'AccountRenamed' }])
  account.given([]).when(open).thenMatches(recording, [{ type: 'AccountOpened' }, { type: 'AccountOpened' }])
  t.same(failures, ['equal', 'fail', 'same', 'match', 'fail'])
})

t.test('API key decider', async (t) => {
  const key = DeciderSpecification.for(apiKeyDecider)
  const create: ApiKeyCommand = { type: 'CreateApiKey', keyId: 'k1', accountId: 'a1', name: 'ci', prefix: 'nk_k1…abcd', secretHash: 'h', now: at }
  const created: ApiKeyEvent = { type: 'ApiKeyCreated', data: { keyId: 'k1', accountId: 'a1', name: 'ci', prefix: 'nk_k1…abcd', secretHash: 'h', at } }
  key.given([]).when(create).then(t, [created])
  key.given([created]).when(create).thenThrows(t, 'conflict', /already exists/)
  const revoke = (accountId: string): ApiKeyCommand => ({ type: 'RevokeApiKey', accountId, reason: 'rotated', now: later })
  const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { keyId: 'k1', accountId: 'a1', reason: 'rotated', at: later } }
  key.given([created]).when(revoke('a1')).then(t, [revoked])
  key.given([created, revoked]).when(revoke('a1')).thenNothingHappened(t, 'revoking twice is a retry')
  key.given([created]).when(revoke('a2')).thenThrows(t, 'not_found', /No such API key/) // someone else's key reads as missing
  key.given([]).when(revoke('a1')).thenThrows(t, 'not_found')
})

t.test('webhook endpoint decider', async (t) => {
  const endpoint = DeciderSpecification.for(webhookEndpointDecider)
  const create = (accountId: string): WebhookEndpointCommand => ({ type: 'CreateWebhookEndpoint', endpointId: 'w1', accountId, url: 'https://hooks.example.com/x', eventTypes: ['note.ready'], description: null, secret: 's1', now: at })
  const created: WebhookEndpointEvent = { type: 'WebhookEndpointCreated', data: { endpointId: 'w1', accountId: 'a1', url: 'https://hooks.example.com/x', eventTypes: ['note.ready'], description: null, secret: 's1', at } }
  endpoint.given([]).when(create('a1')).then(t, [created])
  endpoint.given([created]).when(create('a1')).thenNothingHappened(t, 'creating it again is a retry')
  endpoint.given([created]).when(create('a2')).thenThrows(t, 'conflict', /taken/)
  const rotate = (accountId: string): WebhookEndpointCommand => ({ type: 'RotateWebhookSecret', accountId, secret: 's2', graceMs: 3_600_000, now: later })
  const rotated: WebhookEndpointEvent = { type: 'WebhookSecretRotated', data: { secret: 's2', previousExpiresAt: '2026-03-02T11:00:00.000Z', at: later } }
  endpoint.given([created]).when(rotate('a1')).then(t, [rotated])
  t.same(signingSecrets(endpoint.given([created, rotated]).state(), later), ['s2', 's1'], 'the old secret signs during the grace period')
  t.same(signingSecrets(endpoint.given([created, rotated]).state(), '2026-03-02T11:00:00.000Z'), ['s2'], 'and not after it')
  endpoint.given([created]).when(rotate('a2')).thenThrows(t, 'not_found')
  const del = (accountId: string): WebhookEndpointCommand => ({ type: 'DeleteWebhookEndpoint', accountId, now: later })
  const deleted: WebhookEndpointEvent = { type: 'WebhookEndpointDeleted', data: { at: later } }
  endpoint.given([created]).when(del('a1')).then(t, [deleted])
  endpoint.given([created]).when(del('a2')).thenThrows(t, 'not_found')
  endpoint.given([created, deleted]).when(del('a1')).thenThrows(t, 'not_found', /belongs to you/)
  endpoint.given([created, deleted]).when(rotate('a1')).thenThrows(t, 'not_found')
})

t.test('webhook delivery decider', async (t) => {
  const delivery = DeciderSpecification.for(webhookDeliveryDecider)
  const scheduledData = { deliveryId: 'd1', endpointId: 'w1', accountId: 'a1', messageId: 'msg_1', eventType: 'note.ready', noteId: 'n1', payload: { noteId: 'n1' } }
  const scheduled: WebhookDeliveryEvent = { type: 'WebhookDeliveryScheduled', data: { ...scheduledData, at } }
  delivery.given([]).when({ type: 'ScheduleWebhookDelivery', ...scheduledData, now: at }).then(t, [scheduled])
  delivery.given([scheduled]).when({ type: 'ScheduleWebhookDelivery', ...scheduledData, now: later }).thenNothingHappened(t, 'scheduling twice is a no-op')
  const plusMs = (ms: number) => new Date(Date.parse(at) + ms).toISOString()
  const start = (workerId: string, ms: number): WebhookDeliveryCommand => ({ type: 'StartWebhookAttempt', workerId, leaseMs: 30_000, now: plusMs(ms) })
  const started = (attempt: number, workerId: string, ms: number): WebhookDeliveryEvent => ({ type: 'WebhookDeliveryAttemptStarted', data: { attempt, workerId, leaseUntil: plusMs(ms + 30_000), at: plusMs(ms) } })
  delivery.given([scheduled]).when(start('w1', 0)).then(t, [started(1, 'w1', 0)])
  delivery.given([]).when(start('w1', 0)).thenThrows(t, 'conflict', /unknown/)
  delivery.given([scheduled, started(1, 'w1', 0)]).when(start('w2', 1000)).thenThrows(t, 'conflict', /next try is due/) // the lease holds
  delivery.given([scheduled, started(1, 'w1', 0)]).when(start('w2', 30_000)).then(t, [started(2, 'w2', 30_000)], 'a try whose lease ran out counts as made')
  const record = (attempt: number, workerId: string, statusCode: number | null, ms: number, extra: Partial<Extract<WebhookDeliveryCommand, { type: 'RecordWebhookAttempt' }>> = {}): WebhookDeliveryCommand => ({
    type: 'RecordWebhookAttempt',
    attempt,
    workerId,
    statusCode,
    error: statusCode === null ? 'ECONNREFUSED' : null,
    durationMs: 12,
    retryDelaysMs: [60_000, 600_000],
    jitter: 0.5,
    now: plusMs(ms),
    ...extra,
  })
  delivery.given([scheduled, started(1, 'w1', 0)]).when(record(1, 'w1', 204, 100)).thenMatches(t, [{ type: 'WebhookDeliveryAttempted', data: { attempt: 1, outcome: 'delivered', nextAttemptAt: null } }])
  delivery.given([scheduled, started(1, 'w1', 0)]).when(record(1, 'w1', 500, 100)).thenMatches(t, [{ type: 'WebhookDeliveryAttempted', data: { outcome: 'retry', nextAttemptAt: plusMs(60_100) } }])
  delivery.given([scheduled, started(1, 'w1', 0)]).when(record(1, 'w1', 500, 100, { cancelled: true })).thenMatches(t, [{ type: 'WebhookDeliveryAttempted', data: { outcome: 'cancelled' } }])
  delivery.given([scheduled, started(1, 'w1', 0)]).when(record(1, 'w2', 204, 100)).thenThrows(t, 'conflict', /no longer the current one/)
  const retried: WebhookDeliveryEvent = { type: 'WebhookDeliveryAttempted', data: { attempt: 1, statusCode: 500, error: null, durationMs: 12, outcome: 'retry', nextAttemptAt: plusMs(60_100), at: plusMs(100) } }
  delivery.given([scheduled, started(1, 'w1', 0), retried]).when(start('w1', 60_000)).thenThrows(t, 'conflict', /next try is due/)
  const third = [scheduled, started(1, 'w1', 0), retried, started(2, 'w1', 60_100), { ...retried, data: { ...retried.data, attempt: 2, nextAttemptAt: plusMs(700_000) } } as WebhookDeliveryEvent, started(3, 'w1', 700_000)]
  delivery.given(third).when(record(3, 'w1', null, 700_100)).thenMatches(t, [{ type: 'WebhookDeliveryAttempted', data: { attempt: 3, outcome: 'failed', nextAttemptAt: null, error: 'ECONNREFUSED' } }], 'after the last retry it fails')
  const failed: WebhookDeliveryEvent = { type: 'WebhookDeliveryAttempted', data: { attempt: 3, statusCode: null, error: 'x', durationMs: 1, outcome: 'failed', nextAttemptAt: null, at: plusMs(700_100) } }
  delivery.given([...third, failed]).when(start('w1', 10_000_000)).thenThrows(t, 'conflict', /failed/)
})

t.test('transcript decider: replace, speakers, voice matches, source metadata', async (t) => {
  const transcript = DeciderSpecification.for(noteTranscriptDecider, evolveNoteTranscript)
  const segments: Transcript['segments'] = [
    { id: 's0', sequence: 0, startMs: 0, endMs: 2000, speakerLabel: 'A', text: 'Hello Luis.', confidence: 0.9, locale: null, words: null },
    { id: 's1', sequence: 1, startMs: 2000, endMs: 4000, speakerLabel: 'B', text: 'Hi, thanks.', confidence: 0.9, locale: null, words: null },
  ]
  const text: Transcript = { language: 'en', languagesDetected: ['en'], durationSeconds: 4, engine: 'x', provider: null, model: null, segments }
  const created: NoteEvent = {
    type: 'NoteCreated',
    data: { noteId: 'n1', accountId: 'a1', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'T', language: null, keepAudio: false, upload: null, jobId: null, reservationId: null, at },
  }
  const ready: (NoteEvent | TranscriptEvent)[] = [created, { type: 'NoteTranscribed', data: { transcript: text, at } }, { type: 'NoteReady', data: { durationSeconds: 4, language: 'en', at } }]

  const replace = (find: string, accountId = 'a1'): TranscriptCommand => ({ type: 'ReplaceInTranscript', accountId, find, replace: 'Luisa', caseSensitive: false, wholeWord: true, now: later })
  transcript.given(ready).when(replace('luis')).thenMatches(t, [{ type: 'TranscriptTextReplaced', data: { occurrences: 1, changes: [{ sequence: 0 }], staleTranslations: [] } }])
  transcript.given(ready).when(replace('nobody')).thenNothingHappened(t, 'nothing found, nothing recorded')
  transcript.given(ready).when(replace('')).thenThrows(t, 'invalid_request')
  transcript.given(ready).when(replace('luis', 'a2')).thenThrows(t, 'not_found') // someone else's note is no note (issue 17, item 5)
  transcript.given([created]).when(replace('luis')).thenThrows(t, 'no_transcript')

  const rename = (label: string, name: string, accountId = 'a1'): TranscriptCommand => ({ type: 'RenameSpeaker', accountId, label, name, sourceKey: null, now: later })
  const renamed: TranscriptEvent = { type: 'SpeakerRenamed', data: { label: 'A', name: 'Luis', previousName: null, sourceKey: null, at: later } }
  transcript.given(ready).when(rename('A', '  Luis ')).then(t, [renamed], 'RenameSpeaker trims the name')
  transcript.given([...ready, renamed]).when(rename('A', 'Luis')).thenNothingHappened(t, 'the same name again changes nothing')
  transcript.given([...ready, renamed]).when(rename('A', 'Luisa')).thenMatches(t, [{ type: 'SpeakerRenamed', data: { name: 'Luisa', previousName: 'Luis' } }])
  transcript.given(ready).when(rename('Z', 'Zed')).thenThrows(t, 'not_found', /no speaker "Z"/)
  transcript.given(ready).when(rename('A', '   ')).thenThrows(t, 'invalid_request')
  transcript.given(ready).when(rename('A', 'x'.repeat(121))).thenThrows(t, 'invalid_request')
  transcript.given(ready).when(rename('A', 'Luis', 'a2')).thenThrows(t, 'not_found')

  const suggest = (accountId = 'a1'): TranscriptCommand => ({
    type: 'RecordNameSuggestions',
    accountId,
    engine: 'local',
    model: null,
    suggestions: [
      { label: 'A', name: 'Luis', confidence: 0.95, evidence: [] },
      { label: 'B', name: 'Ann', confidence: 0.5, evidence: [] },
      { label: 'Q', name: 'Ghost', confidence: 0.99, evidence: [] },
    ],
    now: later,
  })
  transcript.given(ready).when(suggest()).thenMatches(t, [{ type: 'SpeakerNamesSuggested', data: { suggestions: [{ label: 'A', applied: true }, { label: 'B', applied: false }] } }], 'only known labels; applied above the threshold')
  transcript.given([...ready, renamed]).when(suggest()).thenMatches(t, [{ type: 'SpeakerNamesSuggested', data: { suggestions: [{ label: 'A', applied: false }, { label: 'B' }] } }], 'a confirmed name is never replaced by an inferred one')
  transcript.given([created]).when(suggest()).thenThrows(t, 'note_not_ready')
  transcript.given(ready).when(suggest('a2')).thenThrows(t, 'not_found')

  const exclude = (excluded: boolean): TranscriptCommand => ({ type: 'SetSpeakerVoiceExclusion', accountId: 'a1', label: 'B', excluded, now: later })
  const excluded: TranscriptEvent = { type: 'SpeakerVoiceExclusionChanged', data: { label: 'B', excluded: true, at: later } }
  transcript.given(ready).when(exclude(true)).then(t, [excluded])
  transcript.given(ready).when(exclude(false)).thenNothingHappened(t, 'not excluded already')
  transcript.given(ready).when({ type: 'SetSpeakerVoiceExclusion', accountId: 'a1', label: 'Z', excluded: true, now: later }).thenThrows(t, 'not_found')

  const match = (label: string): TranscriptCommand => ({ type: 'RecordVoiceMatch', label, match: { profileId: 'p1', profileName: 'Ann', similarity: 0.9 }, now: later })
  const matched: TranscriptEvent = { type: 'SpeakerVoiceMatched', data: { label: 'A', match: { profileId: 'p1', profileName: 'Ann', similarity: 0.9 }, at: later } }
  transcript.given(ready).when(match('A')).then(t, [matched])
  transcript.given([...ready, matched]).when(match('A')).thenNothingHappened(t, 'the same match again')
  transcript.given([...ready, excluded]).when(match('B')).thenNothingHappened(t, 'an excluded voice is never matched')
  transcript.given([created]).when(match('A')).thenNothingHappened(t, 'no transcript, no match')

  const metadata: TranscriptCommand = { type: 'RecordSourceMetadata', metadata: { showTitle: 'Talks' }, now: later }
  transcript.given(ready).when(metadata).thenMatches(t, [{ type: 'NoteSourceMetadataRecorded' }])
  transcript.given([...ready, ...transcript.given(ready).when(metadata).events()]).when(metadata).thenNothingHappened(t, 'the same metadata again')
  transcript.given([]).when(metadata).thenThrows(t, 'not_found')
})

t.test('OAuth client decider: a retried registration changes nothing', async (t) => {
  const client = DeciderSpecification.for(oauthClientDecider)
  const registration: ClientRegistration = {
    clientId: 'c',
    clientName: 'x',
    clientUri: null,
    redirectUris: ['https://app.example.com/cb'],
    grantTypes: ['authorization_code', 'refresh_token'],
    scope: 'mcp',
    tokenEndpointAuthMethod: 'none',
    clientSecretHash: null,
    softwareId: null,
    softwareVersion: null,
  }
  const registered = client.given([]).when({ type: 'RegisterClient', registration, now: at })
  registered.then(t, [{ type: 'OAuthClientRegistered', data: { ...registration, at } }])
  client.given(registered.events()).when({ type: 'RegisterClient', registration, now: later }).thenNothingHappened(t)
  client.given([]).when({ type: 'RegisterClient', registration: { ...registration, redirectUris: [] }, now: at }).thenThrows(t, 'invalid_redirect_uri', /at least one/)
})

t.test('demo note decider: seeds an empty stream once', async (t) => {
  const demo = DeciderSpecification.for(demoNoteDecider)
  const note = DEMO_NOTES[0]!
  const seeded = demo.given([]).when({ type: 'SeedDemoNote', note })
  seeded.then(t, demoNoteEvents(note))
  t.same(seeded.events().map((e) => e.type), ['NoteCreated', 'NoteEdited', 'NoteTranscribed', 'NoteReady'])
  demo.given(seeded.events()).when({ type: 'SeedDemoNote', note }).thenNothingHappened(t, 'a seeded stream is left alone')
})

t.test('transcript edits: another account’s note or none is not_found, the own note without a transcript no_transcript (issue 17, item 5)', async (t) => {
  const { noteTranscriptDecider } = await import('../domain/notes/noteTranscript.ts')
  const { transcriptOf } = await import('./support/transcripts.ts')
  type E = Parameters<typeof noteTranscriptDecider.evolve>[1]
  const note = DeciderSpecification.for(noteTranscriptDecider)
  const created = {
    type: 'NoteCreated',
    data: { noteId: 'n1', accountId: 'a1', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'T', language: null, keepAudio: false, upload: null, jobId: null, reservationId: null, at },
  } as unknown as E
  const transcribed = { type: 'NoteTranscribed', data: { transcript: transcriptOf([['A', 0, 1000, 'Hola.']]), at } } as unknown as E
  const commands = (accountId: string) =>
    [
      { type: 'RenameSpeaker', accountId, label: 'A', name: 'Ana', sourceKey: null, now: later },
      { type: 'SetSpeakerVoiceExclusion', accountId, label: 'A', excluded: true, now: later },
      { type: 'ReplaceInTranscript', accountId, find: 'Hola', replace: 'Hey', caseSensitive: false, wholeWord: false, now: later },
    ] as const
  for (const c of commands('a2')) {
    note.given([]).when(c).thenThrows(t, 'not_found', /belongs to you/)
    note.given([created, transcribed]).when(c).thenThrows(t, 'not_found', /belongs to you/)
  }
  for (const c of commands('a1')) note.given([created]).when(c).thenThrows(t, 'no_transcript')
  note.given([created, transcribed]).when(commands('a1')[0]).then(t, [{ type: 'SpeakerRenamed', data: { label: 'A', name: 'Ana', previousName: null, sourceKey: null, at: later } } as unknown as E])
})
