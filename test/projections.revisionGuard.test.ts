// A late writer cannot put a note back: two instances of the notes projection (a rolling deploy,
// or a lease taken over from a holder that was only slow) both read the note at revision 0; one
// applies revisions 1 and 2; the other, late, applies revision 1 on what it read. The revision
// read is in the update's filter, so the late write matches nothing. Before, it `$set` the old
// title back over revision 2.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { notesProjection, NOTES } from '../projections/notes.ts'
import { noteStream } from '../domain/notes/note.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { RecordedEvent } from '../ports/eventStore.ts'

const noteId = randomUUID()
const at = '2026-01-01T00:00:00.000Z'
let position = 0
const recorded = (revision: number, type: string, data: Record<string, unknown>): RecordedEvent =>
  ({ id: randomUUID(), streamName: noteStream.of(noteId), revision, globalPosition: position++, type, data, metadata: {}, created: new Date(at) }) as unknown as RecordedEvent

t.test('given a note at revision 2, when a late instance applies revision 1 on its stale read, then the note stays at revision 2', async (t) => {
  const docs = openEmbeddedDocumentStore({ path: ':memory:' })
  t.teardown(() => docs.close())
  await notesProjection.setup?.(docs)
  const created = recorded(0, 'NoteCreated', { noteId, accountId: 'a1', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'First', language: null, keepAudio: false, upload: { filename: 'a.wav', contentType: 'audio/wav', declaredBytes: null }, jobId: null, reservationId: null, at })
  const edit1 = recorded(1, 'NoteEdited', { title: 'Second', at })
  const edit2 = recorded(2, 'NoteEdited', { title: 'Third', at })
  await notesProjection.handle([created], docs)
  const staleRead = await docs.collection(NOTES).findOne({ _id: noteId })

  await notesProjection.handle([edit1, edit2], docs)
  // The late instance: its reads answer what it saw before the others wrote.
  const late: DocumentStore = new Proxy(docs, {
    get(target, prop, receiver) {
      if (prop !== 'collection') return Reflect.get(target, prop, receiver)
      return (name: string) => {
        const c = target.collection(name)
        if (name !== NOTES) return c
        return new Proxy(c, { get: (cc, m, r) => (m === 'findOne' ? async () => structuredClone(staleRead) : (Reflect.get(cc, m, r) as (...a: unknown[]) => unknown).bind(cc)) })
      }
    },
  })
  await notesProjection.handle([edit1], late)
  const note = await docs.collection(NOTES).findOne({ _id: noteId })
  t.equal(note?.title, 'Third', 'the late write changed nothing')
  t.equal(note?.revision, 2)
})

// Every projection that writes documents, table-driven: one instance applies a stream's events;
// a late instance, whose reads answer the state after the first `stale` events, then applies
// event `late` (older than what the store holds). The read models must stay exactly as the
// first instance left them; and applying the event again, with current reads, changes nothing.
// The late instance's store: reads from a store that holds the stale state, writes to the real one.
import { foldersProjection } from '../projections/folders.ts'
import { apiKeysProjection } from '../projections/apiKeys.ts'
import { ledgerProjection } from '../projections/ledger.ts'
import { oauthProjection } from '../projections/oauth.ts'
import { segmentIndexProjection } from '../projections/segmentIndex.ts'
import { speakersProjection } from '../projections/speakers.ts'
import { transcriptionJobsProjection } from '../projections/transcriptionJobs.ts'
import { translationsProjection } from '../projections/translations.ts'
import { voiceProfilesProjection } from '../projections/voiceProfiles.ts'
import { webhooksProjection } from '../projections/webhooks.ts'
import { analysisProjection } from '../projections/analysis.ts'
import { deliverablesProjection } from '../projections/deliverables.ts'
import type { Projection } from '../projections/runner.ts'

const READS = new Set(['findOne', 'find', 'countDocuments'])
function lateStore(real: DocumentStore, stale: DocumentStore): DocumentStore {
  const store: DocumentStore = new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'writeBatch') return <R>(fn: (b: DocumentStore) => Promise<R>) => fn(store)
      if (prop !== 'collection') return Reflect.get(target, prop, receiver)
      return (name: string) => {
        const w = target.collection(name)
        const r = stale.collection(name)
        return new Proxy(w, { get: (c, m, rcv) => (READS.has(m as string) ? (r as unknown as Record<string, (...a: unknown[]) => unknown>)[m as string]!.bind(r) : (Reflect.get(c, m, rcv) as (...a: unknown[]) => unknown).bind(c)) })
      }
    },
  })
  return store
}

let pos = 1000
const stream = (name: string, events: [string, Record<string, unknown>][]): RecordedEvent[] =>
  events.map(([type, data], revision) => ({ id: randomUUID(), streamName: name, revision, globalPosition: pos++, type, data: { at: `2026-01-01T00:00:0${revision}.000Z`, ...data }, metadata: { accountId: 'a1' }, created: new Date(at) }) as unknown as RecordedEvent)

const nid = randomUUID()
const noteCreated: [string, Record<string, unknown>] = ['NoteCreated', { noteId: nid, accountId: 'a1', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'First', language: null, keepAudio: false, upload: null, jobId: 'job1', reservationId: null }]
const segment = (text: string) => ({ id: 'seg0', sequence: 0, startMs: 0, endMs: 1000, speakerLabel: 'A', text, confidence: null, locale: null, words: null })
const transcript = { language: 'en', languagesDetected: ['en'], durationSeconds: 1, engine: 'test', provider: null, model: null, segments: [segment('hello old world')] }
const replaced = { find: 'old', replace: 'new', caseSensitive: false, wholeWord: true, occurrences: 1, changes: [{ sequence: 0, segmentId: 'seg0', before: 'hello old world', after: 'hello new world', words: null }], staleTranslations: [] }
const chapters = [{ title: 'All', startMs: 0, endMs: 1000, summary: 'Everything.' }]
const outlineBase = { noteId: nid, accountId: 'a1', engine: 'test', model: 'm', version: '1', chargeId: 'c1', chapters, durationMs: 1000 }

const rows: { projection: Projection; what: string; events: RecordedEvent[]; stale: number; late: number }[] = [
  { projection: notesProjection, what: 'a late title edit', events: stream(`note-${nid}`, [noteCreated, ['NoteEdited', { title: 'Second' }], ['NoteEdited', { title: 'Third' }]]), stale: 1, late: 1 },
  { projection: foldersProjection, what: 'a late rename', events: stream(`folder-${randomUUID()}`, [['FolderCreated', { accountId: 'a1', name: 'One' }], ['FolderRenamed', { name: 'Two' }], ['FolderRenamed', { name: 'Three' }]]), stale: 1, late: 1 },
  { projection: apiKeysProjection, what: 'a late creation over a revoked key', events: stream('apikey-k1', [['ApiKeyCreated', { keyId: 'k1', accountId: 'a1', name: 'k', prefix: 'nk_1' }], ['ApiKeyRevoked', { keyId: 'k1', accountId: 'a1', reason: 'user' }]]), stale: 0, late: 0 },
  {
    projection: ledgerProjection,
    what: 'a late cycle start over a charge',
    events: stream('credits-a1', [['CreditAccountOpened', { accountId: 'a1', plan: 'power' }], ['CreditCycleStarted', { cycle: '2026-01', plan: 'power', granted: 100, expired: 0, balanceAfter: 100 }], ['CreditsCharged', { chargeId: 'ch1', operation: 'ask', cost: 5, noteId: null, requestId: null, balanceAfter: 95 }]]),
    stale: 1,
    late: 1,
  },
  { projection: oauthProjection, what: 'a late consent over its withdrawal', events: stream('oauthconsent-a1', [['OAuthConsentGiven', { accountId: 'a1', clientId: 'cl1', scope: 'notes' }], ['OAuthConsentWithdrawn', { accountId: 'a1', clientId: 'cl1' }]]), stale: 0, late: 0 },
  {
    projection: oauthProjection,
    what: 'a late token issue over a revoked grant',
    events: stream('oauthgrant-g1', [['OAuthAuthorizationGranted', { accountId: 'a1', clientId: 'cl1', scope: 'notes', expiresAt: '2027-01-01T00:00:00.000Z' }], ['OAuthCodeRedeemed', {}], ['OAuthGrantRevoked', { reason: 'user' }]]),
    stale: 1,
    late: 1,
  },
  { projection: segmentIndexProjection, what: 'a late transcript over its edit', events: stream(`note-${nid}`, [noteCreated, ['NoteTranscribed', { transcript }], ['TranscriptTextReplaced', replaced]]), stale: 1, late: 1 },
  { projection: speakersProjection, what: 'a late title edit', events: stream(`note-${nid}`, [noteCreated, ['NoteEdited', { title: 'Second' }], ['NoteEdited', { title: 'Third' }]]), stale: 1, late: 1 },
  { projection: speakersProjection, what: 'a late transcript', events: stream(`note-${nid}`, [noteCreated, ['NoteTranscribed', { transcript }], ['NoteTranscribed', { transcript: { ...transcript, segments: [segment('again')] } }]]), stale: 1, late: 1 },
  {
    projection: transcriptionJobsProjection,
    what: 'a late attempt start over its failure',
    events: stream(`note-${nid}`, [noteCreated, ['TranscriptionStarted', { attempt: 1, retryAt: '2026-01-01T01:00:00.000Z' }], ['TranscriptionAttemptFailed', { attempt: 1, retryAt: '2026-01-01T02:00:00.000Z' }]]),
    stale: 1,
    late: 1,
  },
  {
    projection: translationsProjection,
    what: 'a late start over a failure',
    events: stream(`note-${nid}`, [
      noteCreated,
      ['TranslationRequested', { language: 'es', sourceLanguage: 'en', segments: [0], totalSegments: 1, requestId: 'r1' }],
      ['TranslationStarted', { language: 'es', engine: 'test', model: 'm', attempt: 1 }],
      ['TranslationFailed', { language: 'es', errorCode: 'translation_failed', message: 'no' }],
    ]),
    stale: 2,
    late: 2,
  },
  {
    projection: voiceProfilesProjection,
    what: 'a late profile creation over its exclusion',
    events: stream('voice-a1', [['VoiceConsentGranted', { consentVersion: 'v1', via: 'dashboard' }], ['VoiceProfileCreated', { profileId: 'p1', name: 'Ana' }], ['VoiceProfileExclusionChanged', { profileId: 'p1', excluded: true }]]),
    stale: 1,
    late: 1,
  },
  {
    projection: webhooksProjection,
    what: 'a late endpoint creation over its deletion',
    events: stream('webhook-w1', [['WebhookEndpointCreated', { accountId: 'a1', url: 'https://example.org/h', eventTypes: ['note.ready'], description: null, secret: 's' }], ['WebhookEndpointDeleted', {}]]),
    stale: 0,
    late: 0,
  },
  {
    projection: webhooksProjection,
    what: 'a late attempt start over its result',
    events: stream('webhookdelivery-d1', [
      ['WebhookDeliveryScheduled', { accountId: 'a1', endpointId: 'w1', messageId: 'm1', eventType: 'note.ready', noteId: null }],
      ['WebhookDeliveryAttemptStarted', { attempt: 1, workerId: 'w', leaseUntil: '2026-01-01T01:00:00.000Z' }],
      ['WebhookDeliveryAttempted', { attempt: 1, outcome: 'delivered', statusCode: 200, error: null, durationMs: 5, nextAttemptAt: null, responseExcerpt: null }],
    ]),
    stale: 1,
    late: 1,
  },
  { projection: analysisProjection, what: 'a late outline over a later failure', events: stream('analysis-x1', [['OutlineGenerated', outlineBase], ['OutlineFailed', { ...outlineBase, reason: 'no' }]]), stale: 0, late: 0 },
  {
    projection: deliverablesProjection,
    what: 'a deliverable created twice',
    events: stream('deliverable-dl1', [['DeliverableCreated', { deliverableId: 'dl1', noteId: nid, accountId: 'a1', kind: 'document', template: 't', locale: 'en', title: 'T', subject: null, sections: [], file: { key: 'k', contentType: 'x', bytes: 1, filename: 'f' }, engine: 'e', model: 'm', version: '1' }]]),
    stale: 0,
    late: 0,
  },
]

async function dump(p: Projection, docs: DocumentStore) {
  const out: Record<string, unknown[]> = {}
  for (const c of p.collections) out[c] = (await docs.collection(c).find({})).sort((a, b) => String(a._id).localeCompare(String(b._id)))
  return out
}

for (const row of rows) {
  t.test(`${row.projection.name}: ${row.what} does not regress the read model`, async (t) => {
    const real = openEmbeddedDocumentStore({ path: ':memory:' })
    const stale = openEmbeddedDocumentStore({ path: ':memory:' })
    t.teardown(async () => {
      await real.close()
      await stale.close()
    })
    await row.projection.setup?.(real)
    await row.projection.setup?.(stale)
    await row.projection.handle(row.events, real)
    const expected = await dump(row.projection, real)
    await row.projection.handle(row.events.slice(0, row.stale), stale)

    await row.projection.handle([row.events[row.late]!], lateStore(real, stale))
    t.same(await dump(row.projection, real), expected, 'the late instance changed nothing')
    await row.projection.handle([row.events[row.late]!], real)
    t.same(await dump(row.projection, real), expected, 'applying it again changed nothing')
  })
}
