// Voice attribution across speakers (issue 17, item 6): 'do not recognise this person' on a
// profile reaches every speaker already matched to it or enrolled from it, and one note never
// gives one person's name to two speakers. The rules as given/when/then, then end to end over
// REST (the voice worker's matches appended as it appends them; the model-backed path is in
// test/voice.test.ts).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { DeciderSpecification } from './support/decider.ts'
import { testService } from './support/service.ts'
import { readyNote, transcriptOf } from './support/transcripts.ts'
import { noteTranscriptDecider, type NoteTranscriptState, type TranscriptCommand, type TranscriptEvent } from '../domain/notes/noteTranscript.ts'
import type { Decider } from '../domain/decider.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import { emptySpeaker, viewSpeakers, type SpeakerState } from '../domain/speakers/speakers.ts'

const at = '2026-03-01T10:00:00.000Z'
const now = '2026-03-02T10:00:00.000Z'
type E = TranscriptEvent | NoteEvent

const created = {
  type: 'NoteCreated',
  data: { noteId: 'n1', accountId: 'a1', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'T', language: null, keepAudio: false, upload: null, jobId: null, reservationId: null, at },
} as unknown as E
const transcribed = {
  type: 'NoteTranscribed',
  data: { transcript: transcriptOf([['A', 0, 1000, 'Hello.'], ['B', 1000, 2000, 'Hi.'], ['C', 2000, 3000, 'Hey.']], { language: 'en' }), at },
} as unknown as E
const matched = (label: string, profileId: string, similarity: number, profileName = 'Peter'): E => ({ type: 'SpeakerVoiceMatched', data: { label, match: { profileId, profileName, similarity }, at } })
const excluded = (label: string, profileId?: string): E => ({ type: 'SpeakerVoiceExclusionChanged', data: { label, excluded: true, ...(profileId ? { profileId } : {}), at: now } }) as E

t.test('a profile marked "do not recognise": the decision on each note (decider)', async (t) => {
  // The note stream holds the lifecycle's events too; this decider folds them as well.
  const note = DeciderSpecification.for(noteTranscriptDecider as unknown as Decider<TranscriptCommand, E, NoteTranscriptState>)
  const exclude = (enrolledLabels: string[] = []) => ({ type: 'ExcludeProfileVoice' as const, profileId: 'p1', enrolledLabels, now })

  t.test('given speakers matched to the profile, when it is excluded, then each of them is excluded', async (t) => {
    note.given([created, transcribed, matched('A', 'p1', 0.9), matched('B', 'p1', 0.82), matched('C', 'p2', 0.95, 'Ann')]).when(exclude()).then(t, [excluded('A', 'p1'), excluded('B', 'p1')])
  })
  t.test('given a speaker enrolled from the profile (no match of its own), then it is excluded too', async (t) => {
    note.given([created, transcribed, matched('B', 'p2', 0.9, 'Ann')]).when(exclude(['A'])).then(t, [excluded('A', 'p1')])
  })
  t.test('given a speaker excluded already, then nothing more happens to it (a repeat changes nothing)', async (t) => {
    note.given([created, transcribed, matched('A', 'p1', 0.9), excluded('A', 'p1')]).when(exclude(['A'])).thenNothingHappened(t)
  })
  t.test('given another profile’s matches only, then nothing happens', async (t) => {
    note.given([created, transcribed, matched('A', 'p2', 0.9, 'Ann')]).when(exclude()).thenNothingHappened(t)
  })
  t.test('given no transcript (or no note), then nothing happens', async (t) => {
    note.given([created]).when(exclude(['A'])).thenNothingHappened(t)
    note.given([]).when(exclude(['A'])).thenNothingHappened(t)
  })
  t.test('given a speaker excluded by its profile, when the voice worker records a match, then nothing happens: never matched again', async (t) => {
    note.given([created, transcribed, matched('A', 'p1', 0.9), excluded('A', 'p1')]).when({ type: 'RecordVoiceMatch', label: 'A', match: { profileId: 'p1', profileName: 'Peter', similarity: 0.97 }, now }).thenNothingHappened(t)
  })
})

t.test('one person’s name goes to one speaker of a note (the view)', async (t) => {
  const speaker = (label: string, o: Partial<SpeakerState> = {}): SpeakerState => ({ ...emptySpeaker(label), ...o })
  const voice = (similarity: number, profileName = 'Peter', profileId = 'p1') => ({ profileId, profileName, similarity })

  t.test('two voices resembling one profile: the better match is named, the other only suggested', async (t) => {
    const [a, b] = viewSpeakers([speaker('A', { voice: voice(0.86) }), speaker('B', { voice: voice(0.93) })])
    t.match(b, { name: 'Peter', nameStatus: 'suggested', suggestedName: 'Peter', suggestedNameConfidence: 0.93 })
    t.match(a, { name: null, nameStatus: null, suggestedName: 'Peter', suggestedNameConfidence: 0.86, evidence: [{ source: 'voice', quote: 'Peter', similarity: 0.86 }] })
  })
  t.test('equally good: the first label keeps it', async (t) => {
    t.same(viewSpeakers([speaker('B', { voice: voice(0.9) }), speaker('A', { voice: voice(0.9) })]).map((v) => [v.label, v.name]), [['B', null], ['A', 'Peter']])
  })
  t.test('a name the user gave holds it: a voice resembling that person elsewhere in the note is only suggested', async (t) => {
    const [a, b] = viewSpeakers([speaker('A', { confirmedName: 'peter' }), speaker('B', { voice: voice(0.99) })])
    t.match(a, { name: 'peter', nameStatus: 'confirmed' })
    t.match(b, { name: null, nameStatus: null, suggestedName: 'Peter' })
  })
  t.test('content and voice disagreeing on who is who: still one speaker per name', async (t) => {
    const inferred = { name: 'Peter', confidence: 0.95, evidence: [{ source: 'transcript' as const, segment: 0, quote: 'I am Peter.' }] }
    const views = viewSpeakers([speaker('A', { inferred }), speaker('B', { voice: voice(0.9) })])
    t.same(views.map((v) => [v.label, v.name, v.suggestedName]), [['A', 'Peter', 'Peter'], ['B', null, 'Peter']])
  })
  t.test('below the threshold nobody is named anyway; different people keep their own names', async (t) => {
    t.same(viewSpeakers([speaker('A', { voice: voice(0.7) }), speaker('B', { voice: voice(0.72) })]).map((v) => v.name), [null, null])
    t.same(viewSpeakers([speaker('A', { voice: voice(0.9) }), speaker('B', { voice: voice(0.9, 'Ann', 'p2') })]).map((v) => v.name), ['Peter', 'Ann'])
  })
})

t.test('end to end: REST shows one name per person; excluding the profile reaches every speaker', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const json = { 'content-type': 'application/json' }
  const speakers = async (noteId: string) => (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers`, headers: a.headers })).json().speakers as Record<string, any>[]

  // Consent and a profile enrolled from note 1's speaker A, as the dashboard and the voice worker record them.
  const profileId = randomUUID()
  const enrolledNote = await readyNote(s, a.accountId, { transcript: transcriptOf([['A', 0, 3000, 'Good morning.'], ['B', 3000, 6000, 'Morning.']], { language: 'en' }) })
  await s.inject({ method: 'PATCH', url: `/v1/notes/${enrolledNote}/speakers/A`, headers: { ...a.headers, ...json }, payload: { name: 'Peter' } })
  const v = await s.services.events.appendToStream(`voice-${a.accountId}`, [
    { id: randomUUID(), type: 'VoiceConsentGranted', data: { consentVersion: '2026-01', via: 'dashboard', at } },
    { id: randomUUID(), type: 'VoiceProfileCreated', data: { profileId, name: 'Peter', at } },
    { id: randomUUID(), type: 'VoiceprintEnrolled', data: { profileId, noteId: enrolledNote, label: 'A', voiceSeconds: 3, model: 'test', at } },
  ])
  await s.services.sync.waitFor('voice-profiles', v.lastGlobalPosition)

  // A later note where two speakers resemble Peter (the voice worker's matches), one better.
  const later = await readyNote(s, a.accountId, { transcript: transcriptOf([['A', 0, 3000, 'Planting beans.'], ['B', 3000, 6000, 'And lettuce.'], ['C', 6000, 9000, 'Lovely.']], { language: 'en' }) })
  const m = await s.services.events.appendToStream(`note-${later}`, [
    { id: randomUUID(), type: 'SpeakerVoiceMatched', data: { label: 'A', match: { profileId, profileName: 'Peter', similarity: 0.84 }, at } },
    { id: randomUUID(), type: 'SpeakerVoiceMatched', data: { label: 'B', match: { profileId, profileName: 'Peter', similarity: 0.91 }, at } },
  ])
  await s.services.sync.waitFor('speakers', m.lastGlobalPosition)
  const before = await speakers(later)
  t.match(before[1], { label: 'B', name: 'Peter', nameStatus: 'suggested', evidence: [{ source: 'voice', similarity: 0.91 }] }, 'the better match is named')
  t.match(before[0], { label: 'A', name: null, nameStatus: null, suggestedName: 'Peter', suggestedNameConfidence: 0.84, evidence: [{ source: 'voice' }] }, 'the other is only suggested')
  const transcript = (await s.inject({ method: 'GET', url: `/v1/notes/${later}/transcript`, headers: a.headers })).json()
  t.same(transcript.segments.map((x: { speakerName: string | null }) => x.speakerName), [null, 'Peter', null], 'the transcript names one speaker Peter')

  // 'Do not recognise this person' on the profile.
  const r = await s.inject({ method: 'PATCH', url: `/v1/voice-profiles/${profileId}`, headers: { ...a.headers, ...json }, payload: { voiceExcluded: true } })
  t.equal(r.statusCode, 200, r.body)
  t.match(r.json().profiles, [{ id: profileId, name: 'Peter', voiceExcluded: true, hasVoiceprint: false }])
  const after = await speakers(later)
  for (const sp of after.slice(0, 2)) t.match(sp, { name: null, nameStatus: null, suggestedName: null, voiceExcluded: true, evidence: [] }, `matched speaker ${sp.label}: name and voice evidence gone`)
  t.match(after[2], { label: 'C', voiceExcluded: false }, 'a speaker never matched is untouched')
  t.match((await speakers(enrolledNote))[0], { label: 'A', name: 'Peter', nameStatus: 'confirmed', voiceExcluded: true }, 'the enrolled speaker keeps the name the user gave, and its voice is not analysed again')
  const events = (await s.services.events.readStream(`note-${later}`)).events.slice(-2)
  t.same(events.map((e) => [e.type, e.data.label, e.data.profileId]), [['SpeakerVoiceExclusionChanged', 'A', profileId], ['SpeakerVoiceExclusionChanged', 'B', profileId]], 'recorded on the note, naming the profile')

  // Never matched again: what the voice worker would record changes nothing.
  const again = await s.services.handler.handle(`note-${later}`, { type: 'RecordVoiceMatch', label: 'B', match: { profileId, profileName: 'Peter', similarity: 0.95 }, now }, noteTranscriptDecider)
  t.same(again.events, [], 'a later match is refused by the decider')
  // Repeating the exclusion changes nothing more.
  const n = (await s.services.events.readStream(`note-${later}`)).events.length
  await s.inject({ method: 'PATCH', url: `/v1/voice-profiles/${profileId}`, headers: { ...a.headers, ...json }, payload: { voiceExcluded: true } })
  t.equal((await s.services.events.readStream(`note-${later}`)).events.length, n)
})
