// Voice profiles: consent rules (never granted through an API key; outdated; revoking erases the
// voiceprints and an event records it), and voice matching with a real speaker-embedding model
// over speech that espeak-ng makes: a confirmed name enrols a voiceprint, a later recording of
// the same voice gets a suggested name with `voice` evidence, and 'do not recognise this
// person' on a speaker or a profile stops it.
import t from 'tap'
import { Readable } from 'node:stream'
import { randomUUID } from 'node:crypto'
import { testService } from './support/service.ts'
import { readyNote, transcriptOf, eventually } from './support/transcripts.ts'
import { conversation, speakerModel, MALE, FEMALE } from './support/speech.ts'
import { voiceDecider, CURRENT_CONSENT_VERSION, type VoiceCommand, type VoiceEvent, type Via } from '../domain/voice/voiceProfiles.ts'
import { DeciderSpecification } from './support/decider.ts'
import type { Caller } from '../commands/context.ts'

const json = { 'content-type': 'application/json' }
const as = (accountId: string, via: Caller['via']): Caller => ({ accountId, plan: 'pro', keyId: null, requestId: randomUUID(), via })

t.test('consent decider', async (t) => {
  const now = '2026-02-01T00:00:00.000Z'
  const voice = DeciderSpecification.for(voiceDecider)
  const grant = (via: Via): VoiceCommand => ({ type: 'GrantVoiceConsent', via, consentVersion: CURRENT_CONSENT_VERSION, now })
  for (const via of ['rest', 'mcp', 'admin'] as const) voice.given([]).when(grant(via)).thenThrows(t, 'consent_requires_app')
  const granted: VoiceEvent = { type: 'VoiceConsentGranted', data: { consentVersion: CURRENT_CONSENT_VERSION, via: 'dashboard', at: now } }
  voice.given([]).when(grant('dashboard')).then(t, [granted])
  voice.given([granted]).when(grant('dashboard')).thenNothingHappened(t, 'granting the same version again is a retry')
  const profile: VoiceEvent[] = [
    { type: 'VoiceProfileCreated', data: { profileId: 'p1', name: 'Peter', at: now } },
    { type: 'VoiceprintEnrolled', data: { profileId: 'p1', noteId: 'n1', label: 'A', voiceSeconds: 3, model: 'm', at: now } },
  ]
  voice.given([granted, ...profile]).when({ type: 'RevokeVoiceConsent', via: 'rest', deletedProfileIds: ['p1'], now }).thenMatches(t, [
    { type: 'VoiceConsentRevoked' },
    { type: 'VoiceprintsDeleted', data: { profileIds: ['p1'], reason: 'consent_revoked' } },
  ])
  voice.given([]).when({ type: 'RevokeVoiceConsent', via: 'rest', deletedProfileIds: [], now }).thenNothingHappened(t, 'nothing to revoke')
  const enrol = (profileId: string, name: string, noteId = 'n'): VoiceCommand => ({ type: 'EnrollVoiceprint', profileId, name, noteId, label: 'B', voiceSeconds: 2, model: 'm', now })
  voice.given([]).when(enrol('p2', 'Ann')).thenThrows(t, 'conflict', /consent/) // no enrolment without consent
  voice.given([granted]).when(enrol('p2', 'Ann')).then(t, [
    { type: 'VoiceProfileCreated', data: { profileId: 'p2', name: 'Ann', noteId: 'n', at: now } },
    { type: 'VoiceprintEnrolled', data: { profileId: 'p2', noteId: 'n', label: 'B', voiceSeconds: 2, model: 'm', name: 'Ann', at: now } },
  ])
  voice.given([granted, ...profile]).when(enrol('p9', 'peter', 'n2')).thenMatches(t, [{ type: 'VoiceprintEnrolled', data: { profileId: 'p1', noteId: 'n2' } }], 'a known name enrols on its profile')
  voice.given([granted, ...profile]).when({ ...enrol('p1', 'Peter', 'n1'), label: 'A' } as VoiceCommand).thenNothingHappened(t, 'the same appearance twice')
  const exclude: VoiceCommand = { type: 'SetProfileVoiceExclusion', profileId: 'p1', excluded: true, now }
  const excluded: VoiceEvent[] = [
    { type: 'VoiceProfileExclusionChanged', data: { profileId: 'p1', excluded: true, at: now } },
    { type: 'VoiceprintsDeleted', data: { profileIds: ['p1'], reason: 'profile_excluded', at: now } },
  ]
  voice.given([granted, ...profile]).when(exclude).then(t, excluded)
  voice.given([granted, ...profile, ...excluded]).when(exclude).thenNothingHappened(t)
  voice.given([granted, ...profile, ...excluded]).when(enrol('p1', 'Peter', 'n3')).thenThrows(t, 'conflict', /do not recognise/)
  voice.given([granted]).when(exclude).thenThrows(t, 'not_found')
})

t.test('deleting a note: what its audio and names gave the profiles goes (issue 26, item 4)', async (t) => {
  const now = '2026-02-01T00:00:00.000Z'
  const voice = DeciderSpecification.for(voiceDecider)
  const granted: VoiceEvent = { type: 'VoiceConsentGranted', data: { consentVersion: CURRENT_CONSENT_VERSION, via: 'dashboard', at: now } }
  const enrolled = (profileId: string, noteId: string, label: string, name: string): VoiceEvent => ({ type: 'VoiceprintEnrolled', data: { profileId, noteId, label, voiceSeconds: 3, model: 'm', name, at: now } })
  const history: VoiceEvent[] = [
    granted,
    { type: 'VoiceProfileCreated', data: { profileId: 'only', name: 'Olga', noteId: 'gone', at: now } },
    enrolled('only', 'gone', 'A', 'Olga'),
    { type: 'VoiceProfileCreated', data: { profileId: 'both', name: 'Boris', noteId: 'gone', at: now } },
    enrolled('both', 'gone', 'B', 'Boris'),
    enrolled('both', 'kept', 'A', 'Boris'),
    { type: 'VoiceProfileCreated', data: { profileId: 'other', name: 'Otto', noteId: 'kept', at: now } },
    enrolled('other', 'kept', 'B', 'Otto'),
  ]
  const forget: VoiceCommand = { type: 'ForgetNoteVoices', noteId: 'gone', now }
  voice.given(history).when(forget).then(t, [
    {
      type: 'VoiceNoteForgotten',
      data: { deletedNoteId: 'gone', profiles: [{ profileId: 'only', outcome: 'removed' }, { profileId: 'both', outcome: 'print_deleted' }], at: now },
    },
  ])
  const after = voice.given([...history, ...voice.given(history).when(forget).events()]).state()
  t.same(Object.keys(after.profiles).sort(), ['both', 'other'], 'a profile only the deleted note made goes whole')
  t.match(after.profiles.both, { name: 'Boris', appearances: ['kept:A'], hasVoiceprint: false, voiceSeconds: 0 }, 'one also named elsewhere keeps the name, not the averaged print')
  t.match(after.profiles.other, { appearances: ['kept:B'], hasVoiceprint: true })
  voice.given([...history, ...voice.given(history).when(forget).events()]).when(forget).thenNothingHappened(t, 'forgetting again changes nothing')
  // Replayed after the note's key is shredded: its events read as nothing, and the state is the same.
  const shredded = history.filter((e) => !('noteId' in e.data && e.data.noteId === 'gone'))
  const replayed = voice.given([...shredded, ...voice.given(history).when(forget).events()]).state()
  t.same(Object.keys(replayed.profiles).sort(), ['both', 'other'])
  t.match(replayed.profiles.both, { name: 'Boris', appearances: ['kept:A'], hasVoiceprint: false })
})

t.test('consent over REST, without a model', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const get = async () => (await s.inject({ method: 'GET', url: '/v1/voice-profiles', headers: a.headers })).json()

  const first = await get()
  t.same(first, {
    consent: { status: 'never', grantedAt: null, revokedAt: null },
    profiles: [],
    voiceMatching: { available: false, reason: first.voiceMatching.reason },
  })
  t.match(first.voiceMatching.reason, /^biometric consent is never; no speaker-embedding model is installed \(npm start fetches it into .*models; or set SPEAKER_EMBEDDING_MODEL to a model file\)$/)
  const grant = await s.inject({ method: 'POST', url: '/v1/voice-profiles/consent', headers: { ...a.headers, ...json }, payload: '{}' })
  t.equal(grant.statusCode, 403)
  t.equal(grant.json().error, 'consent_requires_app')
  t.equal((await s.services.events.readStream(`voice-${a.accountId}`)).events.length, 0, 'nothing recorded')
  await t.rejects(s.services.voice.grantConsent(as(a.accountId, 'mcp')), { code: 'consent_requires_app' }, 'nor through MCP')

  await s.services.voice.grantConsent(as(a.accountId, 'dashboard'))
  const granted = await get()
  t.match(granted.consent, { status: 'granted', grantedAt: /^\d{4}-/, revokedAt: null })
  t.match(granted.voiceMatching, { available: false, reason: /SPEAKER_EMBEDDING_MODEL/ }, 'the API says there is no voice matching here')

  await s.services.voice.grantConsent(as(a.accountId, 'dashboard'), '2025-03')
  t.match((await get()).consent, { status: 'outdated' }, 'granted under an older consent text')

  const revoke = await s.inject({ method: 'DELETE', url: '/v1/voice-profiles/consent', headers: a.headers })
  t.equal(revoke.statusCode, 200)
  t.match(revoke.json().consent, { status: 'revoked', revokedAt: /^\d{4}-/ })

})

t.test('a configured model file that does not exist: no matching, and the API says why', async (t) => {
  const s = await testService({ env: { SPEAKER_EMBEDDING_MODEL: '/nonexistent/model.pt' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const r = (await s.inject({ method: 'GET', url: '/v1/voice-profiles', headers: a.headers })).json()
  t.match(r.voiceMatching, { available: false, reason: /\/nonexistent\/model\.pt does not exist/ })
})

t.test('voice matching with a speaker-embedding model', async (t) => {
  const model = speakerModel()
  const s = await testService({ workers: true, env: { SPEAKER_EMBEDDING_MODEL: model } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const voice = s.services.voice
  await voice.grantConsent(as(a.accountId, 'dashboard'))
  const profiles = async () => (await s.inject({ method: 'GET', url: '/v1/voice-profiles', headers: a.headers })).json()
  const speakers = async (noteId: string) => (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers`, headers: a.headers })).json().speakers

  async function recordedNote(turns: Parameters<typeof conversation>[0]) {
    const { wav, segments } = conversation(turns)
    const noteId = randomUUID()
    const blobKey = `uploads/${noteId}`
    await s.services.blobs.put(blobKey, Readable.from([wav]), { contentType: 'audio/wav', maxBytes: wav.length })
    await readyNote(s, a.accountId, { noteId, transcript: transcriptOf(segments, { language: 'en' }), audioBlobKey: blobKey })
    return noteId
  }

  t.equal((await profiles()).voiceMatching.available, true)
  const first = await recordedNote([
    ['A', MALE, 'Good morning everybody, and welcome to the weekly review of the garden.'],
    ['B', FEMALE, 'Thank you. It is lovely to be here again this week.'],
  ])
  const rename = await s.inject({ method: 'PATCH', url: `/v1/notes/${first}/speakers/A`, headers: { ...a.headers, ...json }, payload: { name: 'Peter' } })
  t.equal(rename.statusCode, 200)
  const enrolled = await eventually(async () => {
    const p = (await profiles()).profiles[0]
    return p?.hasVoiceprint ? p : undefined
  }, 60_000)
  t.match(enrolled, { name: 'Peter', confirmedAppearances: 1, hasVoiceprint: true, voiceExcluded: false })
  t.ok(enrolled.voiceSeconds > 2, 'seconds of voice are counted')
  t.same(Object.keys(enrolled).sort(), ['confirmedAppearances', 'hasVoiceprint', 'id', 'name', 'voiceExcluded', 'voiceSeconds'], 'no vector is returned')
  t.ok(await voice.vault.get(a.accountId, enrolled.id), 'the voiceprint is in the vault')
  const events = (await s.services.events.readStream(`voice-${a.accountId}`)).events
  t.notOk(JSON.stringify(events).includes('vector'), 'no event carries a vector')

  const second = await recordedNote([
    ['A', MALE, 'Today we are planting tomatoes, beans and a few rows of lettuce.'],
    ['B', FEMALE, 'Those will grow very well in the warm sunny corner.'],
  ])
  const [sa, sb] = await eventually(async () => {
    const list = await speakers(second)
    return list[0].evidence.length > 0 ? list : undefined
  }, 60_000)
  t.match(sa, { label: 'A', suggestedName: 'Peter', evidence: [{ source: 'voice', segment: null, quote: 'Peter' }] })
  const similarity = sa.evidence[0].similarity
  t.ok(similarity >= 0.75 && similarity <= 1, `the same voice resembles the profile (${similarity})`)
  t.same(sb.evidence, [], 'another voice does not')

  t.test("'do not recognise this person' on the speaker removes the match", async (t) => {
    const r = await s.inject({ method: 'PATCH', url: `/v1/notes/${second}/speakers/A`, headers: { ...a.headers, ...json }, payload: { name: 'Somebody', voiceExcluded: true } })
    t.match(r.json().speakers[0], { voiceExcluded: true, name: 'Somebody', evidence: [] })
    await t.resolves(voice.matchNote(second))
    t.same((await speakers(second))[0].evidence, [], 'and it is never matched again')
  })

  t.test('revoking consent deletes the voiceprints and records it', async (t) => {
    const r = await s.inject({ method: 'DELETE', url: '/v1/voice-profiles/consent', headers: a.headers })
    t.match(r.json(), { consent: { status: 'revoked' }, profiles: [{ name: 'Peter', hasVoiceprint: false }] })
    t.equal(await voice.vault.get(a.accountId, enrolled.id), null, 'gone from the vault')
    const last = (await s.services.events.readStream(`voice-${a.accountId}`)).events.slice(-2)
    t.match(
      last.map((e) => [e.type, e.data]),
      [
        ['VoiceConsentRevoked', {}],
        ['VoiceprintsDeleted', { profileIds: [enrolled.id], reason: 'consent_revoked' }],
      ],
    )
  })

  t.test("'do not recognise this person' on a profile: only its name is kept", async (t) => {
    await voice.grantConsent(as(a.accountId, 'dashboard'))
    t.ok(await voice.enroll(first, 'A', 'Peter'), 'enrolled again under the new consent')
    t.equal((await profiles()).profiles[0].hasVoiceprint, true)
    const r = await s.inject({ method: 'PATCH', url: `/v1/voice-profiles/${enrolled.id}`, headers: { ...a.headers, ...json }, payload: { voiceExcluded: true } })
    t.equal(r.statusCode, 200)
    t.match(r.json().profiles, [{ id: enrolled.id, name: 'Peter', hasVoiceprint: false, voiceExcluded: true }])
    t.equal(await voice.vault.get(a.accountId, enrolled.id), null)
    t.equal(await voice.enroll(first, 'A', 'Peter'), false, 'never enrolled again')
    t.match((await speakers(first))[0], { label: 'A', name: 'Peter', nameStatus: 'confirmed', voiceExcluded: true, evidence: [] }, 'the speaker it was enrolled from is excluded too (issue 17, item 6)')
    const unknown = await s.inject({ method: 'PATCH', url: `/v1/voice-profiles/${randomUUID()}`, headers: { ...a.headers, ...json }, payload: { voiceExcluded: true } })
    t.equal(unknown.statusCode, 404)
  })
})
