// Replace in transcript: the matching rules (literal, case, whole words, any script, word
// timings), and over REST: the event, the full text, the exports and the search index follow.
import t from 'tap'
import { planReplacement } from '../domain/transcripts/replace.ts'
import { testService } from './support/service.ts'
import { readyNote, transcriptOf } from './support/transcripts.ts'

const json = { 'content-type': 'application/json' }

t.test('matching rules', async (t) => {
  const segs = transcriptOf([
    ['A', 0, 1000, 'Ana y Anabel hablan con ANA.'],
    ['B', 1000, 2000, 'Precio: 3.5 $ (aprox.) para Ana.'],
    ['A', 2000, 3000, 'Über straße Straße'],
  ]).segments
  const opts = { find: 'ana', replace: 'Ana María', caseSensitive: false, wholeWord: true }
  t.same(
    planReplacement(segs, opts).map((c) => c.after),
    ['Ana María y Anabel hablan con Ana María.', 'Precio: 3.5 $ (aprox.) para Ana María.'],
    'whole words, any case; Anabel untouched',
  )
  t.same(planReplacement(segs, { ...opts, caseSensitive: true }), [], 'case sensitive: "ana" is not "Ana"')
  t.same(
    planReplacement(segs, { ...opts, find: 'Ana', wholeWord: false, caseSensitive: true }).map((c) => c.after)[0],
    'Ana María y Ana Maríabel hablan con ANA.',
    'inside words when wholeWord is false',
  )
  t.same(planReplacement(segs, { find: '3.5 $ (aprox.)', replace: '$&', caseSensitive: false, wholeWord: false }).map((c) => c.after), ['Precio: $& para Ana.'], 'literal text both ways')
  t.same(planReplacement(segs, { find: 'straße', replace: 'Strasse', caseSensitive: false, wholeWord: true }).map((c) => [c.after, c.occurrences]), [['Über Strasse Strasse', 2]])

  const timed = [{ ...segs[0]!, words: [{ text: 'Ana', startMs: 0, endMs: 100 }, { text: 'y', startMs: 100, endMs: 200 }, { text: 'Anabel', startMs: 200, endMs: 400 }] }]
  t.same(planReplacement(timed, { find: 'Ana', replace: 'Anna', caseSensitive: true, wholeWord: true })[0]!.words, [
    { text: 'Anna', startMs: 0, endMs: 100 },
    { text: 'y', startMs: 100, endMs: 200 },
    { text: 'Anabel', startMs: 200, endMs: 400 },
  ], 'one word for one word keeps the timings')
  t.equal(planReplacement(timed, { find: 'Ana', replace: 'Ana María', caseSensitive: true, wholeWord: true })[0]!.words, null, 'otherwise the timings are dropped')
})

t.test('over REST', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await readyNote(s, a.accountId, {
    title: 'Entrevista',
    transcript: transcriptOf([
      ['A', 0, 2000, 'Bienvenido, Jon Pérez.'],
      ['B', 2000, 4000, 'Gracias. Jon es mi nombre, sí.'],
    ]),
  })
  const search = async (q: string) => (await s.inject({ method: 'GET', url: `/v1/notes?q=${encodeURIComponent(q)}`, headers: a.headers })).json().notes.map((n: { id: string }) => n.id)
  t.same(await search('jon'), [noteId])

  const r = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/transcript/replace`, headers: { ...a.headers, ...json }, payload: { find: 'jon', replace: 'John' } })
  t.equal(r.statusCode, 200)
  t.same(r.json(), {
    noteId,
    occurrences: 2,
    changedSegments: [
      { sequence: 0, before: 'Bienvenido, Jon Pérez.', after: 'Bienvenido, John Pérez.' },
      { sequence: 1, before: 'Gracias. Jon es mi nombre, sí.', after: 'Gracias. John es mi nombre, sí.' },
    ],
    staleTranslations: [],
  })
  const events = (await s.services.events.readStream(`note-${noteId}`)).events
  t.equal(events[events.length - 1]!.type, 'TranscriptTextReplaced', 'recorded as an event')

  const detail = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json()
  t.equal(detail.transcript.fullText, 'Bienvenido, John Pérez. Gracias. John es mi nombre, sí.')
  const txt = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript?format=txt`, headers: a.headers })
  t.equal(txt.body, 'Speaker A: Bienvenido, John Pérez.\nSpeaker B: Gracias. John es mi nombre, sí.\n')
  t.same(await search('john'), [noteId], 'the search index has the new word')
  t.same(await search('jon'), [], 'and not the old one')
  t.same(await search('entrevista john'), [noteId], 'title tokens stay')

  const none = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/transcript/replace`, headers: { ...a.headers, ...json }, payload: { find: 'xyz', replace: 'abc' } })
  t.same(none.json(), { noteId, occurrences: 0, changedSegments: [], staleTranslations: [] }, 'nothing matched: nothing recorded')
  t.equal((await s.services.events.readStream(`note-${noteId}`)).events.length, events.length)

  for (const payload of [{ find: '', replace: 'x' }, { replace: 'x' }, { find: 'a'.repeat(201), replace: 'x' }, { find: 'a', replace: 'x', wholeWord: 'yes' }]) {
    const bad = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/transcript/replace`, headers: { ...a.headers, ...json }, payload })
    t.equal(bad.statusCode, 400)
    t.equal(bad.json().error, 'invalid_request')
  }
  const missing = await s.inject({ method: 'POST', url: '/v1/notes/00000000-0000-4000-8000-000000000000/transcript/replace', headers: { ...a.headers, ...json }, payload: { find: 'a', replace: 'b' } })
  t.equal(missing.statusCode, 404)
  t.equal(missing.json().error, 'not_found', 'the common rule: no note with that id belongs to the caller (issue 17, item 5)')
})
