// DELETE /v1/notes/{id} (issue 16, item 6): the note's content is gone from every read model,
// file and search index, the content in the event log cannot be read back (its key is
// destroyed: crypto-shredding), the credit history stays whole (auditor OK), and no byte of the
// transcript is left anywhere in the data directory (the SQLite files and their WAL included).
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { testService } from './support/service.ts'
import { appendNote } from './support/notes.ts'
import { audit, json } from './support/pipeline.ts'
import { SHREDDED_TYPE } from '../adapters/crypto/shreddingEventStore.ts'
import { randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { readyNote, transcriptOf, eventually } from './support/transcripts.ts'
import { conversation, speakerModel, MALE, FEMALE } from './support/speech.ts'

const PHRASE = 'Zanzibar quokka marmalade protocol'
const WORD = 'quokka'

/** Every file under `dir` whose bytes contain `needle` in UTF-8 or UTF-16, or its distinctive word. */
function filesContaining(dir: string, needles: string[]): string[] {
  const forms = needles.flatMap((n) => [Buffer.from(n, 'utf8'), Buffer.from(n, 'utf16le'), Buffer.from(n.toUpperCase(), 'utf8')])
  const hits: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      const st = statSync(p)
      if (st.isDirectory()) walk(p)
      else if (st.isFile()) {
        const bytes = readFileSync(p)
        if (forms.some((f) => bytes.includes(f))) hits.push(p)
      }
    }
  }
  walk(dir)
  return hits
}

t.test('given a transcribed, analysed, edited and searched note, when its owner deletes it, then no byte of it is left and the ledger still audits', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const b = await s.account('pro')
  const { noteId } = await appendNote(s, a.accountId, {
    title: 'Weekly sync',
    language: 'en',
    lines: [
      ['A', `Welcome everyone. Today we review the ${PHRASE} before launch.`],
      ['B', `I will talk to marketing tomorrow about the ${PHRASE}.`],
      ['A', 'We decided to ship it on Friday. Who owns the budget?'],
    ],
  })
  const get = (url: string, who = a) => s.inject({ method: 'GET', url, headers: who.headers })
  t.equal((await get(`/v1/notes/${noteId}/transcript`)).statusCode, 200)
  const analysis = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/analysis`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ templates: ['generic', 'meeting_minutes'] }) })
  t.equal(analysis.statusCode, 200, analysis.body.slice(0, 300))
  const edit = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/transcript/replace`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ find: 'Friday', replace: `Friday (${PHRASE})` }) })
  t.equal(edit.statusCode, 200, edit.body.slice(0, 300))
  const rename = await s.inject({ method: 'PATCH', url: `/v1/notes/${noteId}/speakers/A`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ name: 'Quokka Host' }) })
  t.equal(rename.statusCode, 200, rename.body.slice(0, 300))
  const found = await get(`/v1/notes?q=${WORD}`)
  t.same(found.json().notes.map((n: { id: string }) => n.id), [noteId], 'the search index has it')

  // Sealed in the log: the events hold ciphertext, the read models the text.
  t.same(filesContaining(s.dir, [PHRASE]).filter((f) => /events\.db/.test(f)), [], 'the event log never holds the text in the clear')
  t.ok(filesContaining(s.dir, [PHRASE]).length > 0, 'the read models do (the search is not blind)')
  const balanceBefore = (await audit(s, a.accountId)).result.balance

  const other = await s.inject({ method: 'DELETE', url: `/v1/notes/${noteId}`, headers: b.headers })
  t.equal(other.statusCode, 404, 'another account cannot delete it')
  t.equal(other.json().error, 'not_found')
  t.equal((await get(`/v1/notes/${noteId}`)).statusCode, 200, 'and it is still there')

  const del = await s.inject({ method: 'DELETE', url: `/v1/notes/${noteId}`, headers: a.headers })
  t.equal(del.statusCode, 200, del.body)
  t.same(del.json(), { deleted: true, noteId })

  for (const url of [`/v1/notes/${noteId}`, `/v1/notes/${noteId}/transcript`, `/v1/notes/${noteId}/speakers`, `/v1/notes/${noteId}/analysis`]) {
    const r = await get(url)
    t.equal(r.statusCode, 404, url)
    // The transcript route answers an unknown note as it always has (spec: no_transcript, also for "not yours").
    t.equal(r.json().error, url.endsWith('/transcript') ? 'no_transcript' : 'not_found', url)
  }
  t.equal((await s.inject({ method: 'DELETE', url: `/v1/notes/${noteId}`, headers: a.headers })).statusCode, 404, 'deleting again: not_found')
  t.same((await get(`/v1/notes?q=${WORD}`)).json().notes, [], 'gone from search')
  t.same((await get('/v1/notes')).json().notes, [], 'gone from the list')

  // The log keeps its events (positions, revisions), but their content cannot be read back.
  const stream = (await s.services.events.readStream(`note-${noteId}`)).events
  t.ok(stream.length >= 5)
  t.same([...new Set(stream.map((e) => e.type))].sort(), [SHREDDED_TYPE, 'NoteDeleted'].sort())
  t.same(stream.at(-1)!.data, { accountId: a.accountId, at: stream.at(-1)!.data.at }, 'the tombstone carries no content')
  const analysisEvents = (await s.services.events.readStream(`analysis-${noteId}`)).events
  t.ok(analysisEvents.length > 0 && analysisEvents.every((e) => e.type === SHREDDED_TYPE), 'analyses are shredded too')

  const { result } = await audit(s, a.accountId)
  t.ok(result.ok, `auditor verdict: ${result.problems.join('; ')}`)
  t.equal(result.balance, balanceBefore, 'the credits spent on the note stay spent and accounted for')

  t.same(filesContaining(s.dir, [PHRASE, 'Quokka Host', WORD]), [], 'no byte of the transcript, the speaker name or the analyses anywhere in the data directory')
})

t.test('given an import still holding its 50 credits and an upload waiting for bytes, when deleted, then the credits come back and both are gone', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const post = (body: unknown) => s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify(body) })
  const imported = (await post({ audioUrl: 'https://media.example.org/held.mp3' })).json()
  t.equal((await audit(s, a.accountId)).result.balance, 4950, '50 held')
  const upload = (await post({ filename: 'x.wav', contentType: 'audio/wav' })).json()
  for (const id of [imported.noteId, upload.noteId]) t.equal((await s.inject({ method: 'DELETE', url: `/v1/notes/${id}`, headers: a.headers })).statusCode, 200)
  const { result, events } = await audit(s, a.accountId)
  t.ok(result.ok, `auditor verdict: ${result.problems.join('; ')}`)
  t.equal(result.balance, 5000, 'the hold was released')
  t.ok(events.some((e) => e.type === 'CreditsReleased'), 'by an event: the history shows it')
  t.same((await s.inject({ method: 'GET', url: '/v1/notes', headers: a.headers })).json().notes, [])
  const u = new URL(upload.upload.url)
  t.equal((await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'audio/wav' }, payload: Buffer.alloc(10) })).statusCode, 404, 'the upload slot takes nothing more')
})

t.test('given a voiceprint enrolled from a note and a name typed for it, when the note is deleted, then the print and the name are gone; another note\'s profile stays (issue 26, item 4)', async (t) => {
  const s = await testService({ workers: true, env: { SPEAKER_EMBEDDING_MODEL: speakerModel() } })
  t.teardown(s.close)
  const a = await s.account('pro')
  await s.services.voice.grantConsent({ accountId: a.accountId, plan: 'pro', keyId: null, requestId: randomUUID(), via: 'dashboard' })
  const profiles = async () => (await s.inject({ method: 'GET', url: '/v1/voice-profiles', headers: a.headers })).json().profiles as { id: string; name: string; hasVoiceprint: boolean }[]
  async function recordedNote(turns: Parameters<typeof conversation>[0], name: string) {
    const { wav, segments } = conversation(turns)
    const noteId = randomUUID()
    await s.services.blobs.put(`uploads/${noteId}`, Readable.from([wav]), { contentType: 'audio/wav', maxBytes: wav.length })
    await readyNote(s, a.accountId, { noteId, transcript: transcriptOf(segments, { language: 'en' }), audioBlobKey: `uploads/${noteId}` })
    const r = await s.inject({ method: 'PATCH', url: `/v1/notes/${noteId}/speakers/A`, headers: { ...a.headers, ...json }, payload: { name } })
    t.equal(r.statusCode, 200)
    return noteId
  }
  const SECRET_NAME = 'Quokka Zebediah'
  const gone = await recordedNote([['A', MALE, 'Good morning everybody, and welcome to the weekly review of the garden.'], ['B', FEMALE, 'Thank you, it is lovely to be here.']], SECRET_NAME)
  const keptNote = await recordedNote([['A', FEMALE, 'Today we are planting tomatoes, beans and a few rows of lettuce.'], ['B', MALE, 'Those will grow well in the sunny corner.']], 'Keeper Person')
  const enrolled = await eventually(async () => {
    const list = await profiles()
    return list.length === 2 && list.every((p) => p.hasVoiceprint) ? list : undefined
  }, 60_000)
  // The voice work those names started (enrolments, then matching the notes' speakers) is done.
  const renamed = await Promise.all([gone, keptNote].map(async (id) => (await s.services.events.readStream(`note-${id}`)).events.filter((e) => e.type === 'SpeakerRenamed').at(-1)!.globalPosition))
  await s.services.sync.waitFor('voice-worker', renamed.reduce((a, b) => (a > b ? a : b)))
  const secret = enrolled.find((p) => p.name === SECRET_NAME)!
  const kept = enrolled.find((p) => p.name === 'Keeper Person')!
  t.ok(await s.services.voice.vault.get(a.accountId, secret.id), 'the voiceprint is in the vault')
  t.same(filesContaining(s.dir, [SECRET_NAME]).filter((f) => /events\.db/.test(f)), [], 'the log holds the name sealed only')

  t.equal((await s.inject({ method: 'DELETE', url: `/v1/notes/${gone}`, headers: a.headers })).statusCode, 200)
  t.same((await profiles()).map((p) => [p.name, p.hasVoiceprint]), [['Keeper Person', true]], 'the profile the deleted note made is gone; the other stays')
  t.equal(await s.services.voice.vault.get(a.accountId, secret.id), null, 'its voiceprint is gone from the vault')
  t.ok(await s.services.voice.vault.get(a.accountId, kept.id), "the other note's voiceprint stays")
  t.same(filesContaining(s.dir, [SECRET_NAME, 'Zebediah']), [], 'no byte of the name anywhere in the data directory')
  t.same(filesContaining(s.dir, [secret.id]).filter((f) => f.endsWith('.f32')), [], 'no voiceprint file of it')
  const voiceEvents = (await s.services.events.readStream(`voice-${a.accountId}`)).events
  t.match(voiceEvents.at(-1), { type: 'VoiceNoteForgotten', data: { deletedNoteId: gone, profiles: [{ profileId: secret.id, outcome: 'removed' }] } })
})

t.test('given an enrolment analysing a note when the note is deleted, then the print it was merged into is erased too (the race)', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const caller = { accountId: a.accountId, plan: 'pro' as const, keyId: null, requestId: randomUUID(), via: 'dashboard' as const }
  await s.services.voice.grantConsent(caller)
  const note = async () => {
    const noteId = randomUUID()
    await s.services.blobs.put(`uploads/${noteId}`, Readable.from([Buffer.alloc(64)]), { contentType: 'audio/wav', maxBytes: 64 })
    await readyNote(s, a.accountId, { noteId, transcript: transcriptOf([['A', 0, 4000, 'Hello there, this is me talking.']], { language: 'en' }), audioBlobKey: `uploads/${noteId}` })
    return noteId
  }
  const kept = await note()
  const doomed = await note()
  // An embedder whose analysis of the doomed note outlasts the note: its owner deletes it meanwhile.
  const embedder = { model: 'test', embed: async (_path: string) => ({ vector: new Float32Array(4).fill(0.5), voiceSeconds: 3 }) }
  const { VoiceCommands } = await import('../commands/voice.ts')
  const voice = new VoiceCommands({ handler: s.services.handler, reads: s.services.queries.voice, sync: s.services.sync, blobs: s.services.blobs, embedder, embedderUnavailable: null, matchThreshold: 0.75 })
  t.ok(await voice.enroll(kept, 'A', 'Keeper'), 'enrolled from the kept note')
  const profileId = (await s.services.voice.profiles(caller)).profiles[0]!.id
  embedder.embed = async () => {
    t.equal((await s.inject({ method: 'DELETE', url: `/v1/notes/${doomed}`, headers: a.headers })).statusCode, 200, 'deleted while its audio is analysed')
    return { vector: new Float32Array(4).fill(0.25), voiceSeconds: 3 }
  }
  t.equal(await voice.enroll(doomed, 'A', 'Keeper'), false, 'the enrolment does not count')
  t.equal(await voice.vault.get(a.accountId, profileId), null, 'the print that took in its audio is erased')
  t.match((await s.services.voice.profiles(caller)).profiles, [{ id: profileId, name: 'Keeper', hasVoiceprint: false }])
  const last = (await s.services.events.readStream(`voice-${a.accountId}`)).events.at(-1)!
  t.match(last, { type: 'VoiceprintsDeleted', data: { profileIds: [profileId], reason: 'note_deleted' } })
})
