// Speakers: the naming rules in the six languages, the source key of the roster, and over REST:
// names in use, the threshold, suggest never overwriting a user-given name, the roster carrying
// to the next note of the same podcast, the rate limit, failures, and the timeline.
import t from 'tap'
import { inferSpeakerNames } from '../domain/speakers/inference.ts'
import { sourceKeyOf } from '../domain/speakers/sourceKey.ts'
import { testService } from './support/service.ts'
import { readyNote, transcriptOf, type SegmentSpec } from './support/transcripts.ts'
import { startOpenAiServer, chatCompletion } from './support/openaiServer.ts'

const json = { 'content-type': 'application/json' }
const segs = (specs: [string, string][]) => specs.map(([speakerLabel, text], sequence) => ({ sequence, speakerLabel, text }))
const names = (r: ReturnType<typeof inferSpeakerNames>) => Object.fromEntries(r.map((s) => [s.label, [s.name, s.confidence]]))

t.test('inference in six languages', async (t) => {
  const cases: { lang: string; segments: [string, string][]; expect: Record<string, [string | null, number | null]> }[] = [
    { lang: 'es', segments: [['A', 'Hola, soy María García y esto es Café Semanal.'], ['B', 'Gracias, María. Yo me llamo Pedro.']], expect: { A: ['María García', 0.85], B: ['Pedro', 0.9] } },
    {
      lang: 'en',
      segments: [['A', 'Welcome to the show, Tom.'], ['B', 'Thanks for having me.'], ['A', 'Tom, what brought you here?'], ['B', 'My name is Tom Baker, and I love radio.']],
      expect: { A: [null, null], B: ['Tom Baker', 0.975] },
    },
    { lang: 'de', segments: [['A', 'Hallo, ich heiße Anna Schmidt.'], ['B', 'Danke, Anna. Schön, hier zu sein.']], expect: { A: ['Anna Schmidt', 0.95], B: [null, null] } },
    { lang: 'fr', segments: [['A', "Bonjour, je m'appelle Claire."], ['B', 'Merci Claire, je suis Julien.']], expect: { A: ['Claire', 0.95], B: ['Julien', 0.7] } },
    { lang: 'it', segments: [['A', 'Ciao a tutti, mi chiamo Giulia Rossi.'], ['B', 'Grazie Giulia, sono Marco.']], expect: { A: ['Giulia Rossi', 0.95], B: ['Marco', 0.7] } },
    { lang: 'pt', segments: [['A', 'Olá, meu nome é João Silva.'], ['B', 'Obrigada, João. Eu sou Ana.']], expect: { A: ['João Silva', 0.95], B: ['Ana', 0.7] } },
  ]
  for (const c of cases) {
    t.same(names(inferSpeakerNames({ title: '', metadata: null, segments: segs(c.segments), roster: [] })), c.expect, c.lang)
  }
})

t.test('evidence quotes name their segment; words that are not names are not taken', async (t) => {
  const r = inferSpeakerNames({ title: '', metadata: null, segments: segs([['A', 'Bueno, ¿empezamos?'], ['B', 'Soy Muy feliz. I am Happy to be here.'], ['A', 'Gracias, Luis.']]), roster: [] })
  t.same(r.find((s) => s.label === 'B'), { label: 'B', name: 'Luis', confidence: 0.5, evidence: [{ source: 'transcript', segment: 2, quote: 'Gracias, Luis.' }] })
  t.same(r.find((s) => s.label === 'A'), { label: 'A', name: null, confidence: null, evidence: [] })
})

t.test('metadata and roster', async (t) => {
  const segments = segs([['A', 'Bienvenidos a otro episodio.'], ['B', 'Encantada de estar aquí.']])
  const r = inferSpeakerNames({ title: 'Episodio 5: entrevista con Lucía Méndez', metadata: { hosts: ['Pablo Ruiz'] }, segments, roster: [] })
  t.same(names(r), { A: ['Pablo Ruiz', 0.5], B: ['Lucía Méndez', 0.4] }, 'host first speaker, guest the other of two')
  t.match(r[1]!.evidence, [{ source: 'metadata', segment: null, quote: 'Episodio 5: entrevista con Lucía Méndez' }])
  const r2 = inferSpeakerNames({ title: '', metadata: null, segments, roster: [{ name: 'Pablo Ruiz', notes: 3, firstSpeakerNotes: 3 }, { name: 'Eva', notes: 1, firstSpeakerNotes: 0 }] })
  t.same(names(r2), { A: ['Pablo Ruiz', 0.6], B: [null, null] }, 'the roster host for the first speaker; a roster name never mentioned is not assigned')
})

t.test('source keys', async (t) => {
  t.equal(sourceKeyOf({ provider: 'podcast-rss', sourceUrl: 'https://Feeds.Example.org/show/feed.rss#x', metadata: null }), 'feed:feeds.example.org/show/feed.rss')
  t.equal(sourceKeyOf({ provider: 'podcast-directory', sourceUrl: 'https://podcasts.apple.com/us/podcast/x/id123456?i=99', metadata: null }), 'show:podcasts.apple.com:id123456')
  t.equal(sourceKeyOf({ provider: 'videosite', sourceUrl: 'https://www.youtube.com/watch?v=abc', metadata: null }), null, 'a single video says nothing of its channel')
  t.equal(sourceKeyOf({ provider: 'videosite', sourceUrl: 'https://www.youtube.com/watch?v=abc', metadata: { channelId: 'UC1' } }), 'channel:videosite:UC1')
  t.equal(sourceKeyOf({ provider: 'videosite', sourceUrl: 'https://www.youtube.com/@SomeChannel/videos', metadata: null }), 'channel:youtube.com:@somechannel')
  t.equal(sourceKeyOf({ provider: 'direct', sourceUrl: 'https://media.example.org/show/ep1.mp3', metadata: null }), sourceKeyOf({ provider: 'direct', sourceUrl: 'https://media.example.org/show/ep2.mp3', metadata: null }))
  t.equal(sourceKeyOf({ provider: 'direct', sourceUrl: 'https://media.example.org/show/ep1.mp3', metadata: { feedUrl: 'https://feeds.example.org/show/feed.rss' } }), 'feed:feeds.example.org/show/feed.rss', 'metadata wins')
  t.equal(sourceKeyOf({ provider: null, sourceUrl: null, metadata: null }), null, 'uploads have no source')
})

const FEED = 'https://feeds.example.org/cafe/feed.rss'
const EPISODE_1: SegmentSpec[] = [
  ['A', 0, 3000, 'Bienvenidos a Café Semanal. Hoy me acompaña Luis.'],
  ['B', 3000, 6000, 'Hola a todos.'],
  ['A', 6000, 9000, 'Bueno, empecemos.'],
]
const EPISODE_2: SegmentSpec[] = [
  ['A', 0, 3000, 'Bienvenidos a un nuevo episodio.'],
  ['B', 3000, 6000, 'Hola a todos.'],
  ['A', 6000, 9000, 'Luis, ¿qué tal la semana?'],
  ['B', 9000, 12000, 'Muy bien, la verdad.'],
  ['A', 12000, 15000, 'Gracias, Luis.'],
]

t.test('over REST (rules engine)', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const speakers = async (noteId: string) => (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers`, headers: a.headers })).json()
  const suggest = (noteId: string, headers = a.headers) => s.inject({ method: 'POST', url: `/v1/notes/${noteId}/speakers/suggest`, headers })
  const patch = (noteId: string, label: string, body: unknown) => s.inject({ method: 'PATCH', url: `/v1/notes/${noteId}/speakers/${label}`, headers: { ...a.headers, ...json }, payload: JSON.stringify(body) })

  t.test('GET speakers: labels with stats, no names yet', async (t) => {
    const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf(EPISODE_1) })
    t.same(await speakers(noteId), {
      noteId,
      speakers: [
        { label: 'A', name: null, nameStatus: null, suggestedName: null, suggestedNameConfidence: null, speechSeconds: 6, segmentCount: 2, voiceExcluded: false, evidence: [] },
        { label: 'B', name: null, nameStatus: null, suggestedName: null, suggestedNameConfidence: null, speechSeconds: 3, segmentCount: 1, voiceExcluded: false, evidence: [] },
      ],
    })
  })

  t.test('below the threshold: suggested with evidence, not in use', async (t) => {
    const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf([['A', 0, 1000, 'Bienvenido, Carlos.'], ['B', 1000, 2000, 'Hola.']]) })
    const r = await suggest(noteId)
    t.equal(r.statusCode, 200)
    t.match(r.json().speakers[1], { label: 'B', name: null, nameStatus: null, suggestedName: 'Carlos', suggestedNameConfidence: 0.5, evidence: [{ source: 'transcript', segment: 0, quote: 'Bienvenido, Carlos.' }] })
    const txt = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript?format=txt`, headers: a.headers })
    t.equal(txt.body, 'Speaker A: Bienvenido, Carlos.\nSpeaker B: Hola.\n', 'a suggestion below the threshold is not used in exports')
  })

  t.test('above the threshold: the name is in use (suggested); a user-given name is never overwritten', async (t) => {
    const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf([['A', 0, 1000, 'Hola, me llamo Elena Torres.'], ['B', 1000, 2000, 'Yo me llamo Bruno.']]) })
    t.equal((await patch(noteId, 'B', { name: '  Bruno Díaz  ' })).statusCode, 200)
    const r = (await suggest(noteId)).json()
    t.match(r.speakers[0], { label: 'A', name: 'Elena Torres', nameStatus: 'suggested', suggestedName: 'Elena Torres', suggestedNameConfidence: 0.9 })
    t.match(r.speakers[1], { label: 'B', name: 'Bruno Díaz', nameStatus: 'confirmed', suggestedName: 'Bruno' })
    const md = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript?format=md`, headers: a.headers })
    t.match(md.body, /## Elena Torres\n[^]*## Bruno Díaz\n/, 'names in use in the exports')
    const again = (await suggest(noteId)).json()
    t.match(again.speakers[1], { name: 'Bruno Díaz', nameStatus: 'confirmed' }, 'still the user’s after another suggest')
    t.match((await patch(noteId, 'A', { name: 'Elena T.' })).json().speakers[0], { name: 'Elena T.', nameStatus: 'confirmed' }, 'PATCH confirms over a suggestion')
  })

  t.test('the roster carries to the next episode of the same podcast', async (t) => {
    const ep1 = await readyNote(s, a.accountId, { sourceUrl: FEED, transcript: transcriptOf(EPISODE_1) })
    await patch(ep1, 'A', { name: 'Ana García' })
    await patch(ep1, 'B', { name: 'Luis' })
    const ep2 = await readyNote(s, a.accountId, { sourceUrl: FEED, transcript: transcriptOf(EPISODE_2) })
    const r = (await suggest(ep2)).json()
    t.match(r.speakers[0], { label: 'A', name: null, suggestedName: 'Ana García', suggestedNameConfidence: 0.6, evidence: [{ source: 'roster', segment: null, quote: 'Ana García' }] })
    t.match(r.speakers[1], { label: 'B', name: 'Luis', nameStatus: 'suggested', suggestedNameConfidence: 0.875 })
    t.ok(r.speakers[1].evidence.some((e: { source: string }) => e.source === 'roster'), 'the roster supports the transcript')
    const other = await readyNote(s, a.accountId, { sourceUrl: 'https://feeds.example.org/other/feed.rss', transcript: transcriptOf(EPISODE_2) })
    const o = (await suggest(other)).json()
    t.match(o.speakers[0], { suggestedName: null }, 'another podcast has its own roster')
    t.notOk(o.speakers[1].evidence.some((e: { source: string }) => e.source === 'roster'))
  })

  t.test('show metadata from the pipeline: hosts, and the roster key across links', async (t) => {
    const metadata = { feedUrl: 'https://feeds.example.org/radio/feed.rss', hosts: ['Pablo Ruiz'] }
    const n1 = await readyNote(s, a.accountId, { sourceUrl: 'https://media.example.org/a/ep1.mp3', provider: 'direct', metadata, transcript: transcriptOf(EPISODE_1) })
    const r1 = (await suggest(n1)).json()
    t.match(r1.speakers[0], { suggestedName: 'Pablo Ruiz', suggestedNameConfidence: 0.5, evidence: [{ source: 'metadata', quote: 'host: Pablo Ruiz' }] })
    await patch(n1, 'B', { name: 'Luis' })
    const n2 = await readyNote(s, a.accountId, { sourceUrl: 'https://cdn.example.net/x/ep2.mp3', provider: 'direct', metadata, transcript: transcriptOf(EPISODE_2) })
    const r2 = (await suggest(n2)).json()
    t.ok(r2.speakers[1].evidence.some((e: { source: string }) => e.source === 'roster'), 'the same feed, whatever the file link')
  })

  t.test('PATCH rules', async (t) => {
    const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf(EPISODE_1) })
    for (const body of [{ name: '' }, { name: '   ' }, { name: 'x'.repeat(121) }, {}, { name: 5 }]) {
      const r = await patch(noteId, 'A', body)
      t.equal(r.statusCode, 400, JSON.stringify(body).slice(0, 40))
      t.equal(r.json().error, 'invalid_request')
    }
    t.equal((await patch(noteId, 'A', { name: 'x'.repeat(120) })).statusCode, 200)
    const unknown = await patch(noteId, 'Z', { name: 'Zed' })
    t.equal(unknown.statusCode, 404)
    t.equal(unknown.json().error, 'not_found')
    // The common rule, not no_transcript: an unknown note, and another account's (issue 17, item 5).
    const b = await s.account('pro')
    for (const [what, r] of [
      ['an unknown note', await patch('00000000-0000-4000-8000-000000000000', 'A', { name: 'Zed' })],
      ['another account’s note', await s.inject({ method: 'PATCH', url: `/v1/notes/${noteId}/speakers/A`, headers: { ...b.headers, ...json }, payload: '{"name":"Zed"}' })],
    ] as const) {
      t.equal(r.statusCode, 404, what)
      t.same(r.json(), { error: 'not_found', message: 'No note with that id belongs to you.' }, what)
    }
    const excluded = (await patch(noteId, 'B', { name: 'Luis', voiceExcluded: true })).json()
    t.match(excluded.speakers[1], { name: 'Luis', voiceExcluded: true })
  })

  t.test('the timeline: who speaks when, with names in use', async (t) => {
    const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf([['A', 0, 1000, 'Uno.'], ['A', 1000, 2500, 'Dos.'], ['B', 2500, 4000, 'Tres.'], ['A', 4000, 5000, 'Cuatro.']]) })
    await patch(noteId, 'B', { name: 'Berta' })
    const r = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers/timeline`, headers: a.headers })
    t.equal(r.statusCode, 200)
    t.same(r.json().turns, [
      { speakerLabel: 'A', speakerName: null, startMs: 0, endMs: 2500, firstSegment: 0, lastSegment: 1, segmentCount: 2 },
      { speakerLabel: 'B', speakerName: 'Berta', startMs: 2500, endMs: 4000, firstSegment: 2, lastSegment: 2, segmentCount: 1 },
      { speakerLabel: 'A', speakerName: null, startMs: 4000, endMs: 5000, firstSegment: 3, lastSegment: 3, segmentCount: 1 },
    ])
  })

  t.test('409 note_not_ready before the note is ready', async (t) => {
    const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf(EPISODE_1), ready: false })
    const r = await suggest(noteId)
    t.equal(r.statusCode, 409)
    t.equal(r.json().error, 'note_not_ready')
  })

  t.test('10 suggestions per hour per API key, then 429 with retryAfter', async (t) => {
    const b = await s.account('pro')
    const noteId = await readyNote(s, b.accountId, { transcript: transcriptOf(EPISODE_1) })
    for (let i = 0; i < 10; i++) t.equal((await suggest(noteId, b.headers)).statusCode, 200)
    const r = await suggest(noteId, b.headers)
    t.equal(r.statusCode, 429)
    t.equal(r.json().error, 'rate_limit_exceeded')
    t.ok(r.json().retryAfter > 3500 && r.json().retryAfter <= 3600)
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers`, headers: b.headers })).statusCode, 200, 'other speaker routes are not limited')
    const otherKey = await s.services.accounts.createApiKey(b.accountId, 'second')
    t.equal((await suggest(noteId, { authorization: `Bearer ${otherKey.apiKey}` })).statusCode, 200, 'per key')
  })
})

t.test('with a chat model', async (t) => {
  let answer: () => { status?: number; json?: unknown } = () => ({ status: 500, json: { error: { message: 'down' } } })
  const llm = await startOpenAiServer(() => answer())
  t.teardown(llm.close)
  const s = await testService({ env: { LLM_BASE_URL: llm.baseUrl } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf([['A', 0, 1000, 'Guten Tag, hier ist Jonas.'], ['B', 1000, 2000, 'Hallo Jonas, ich bin Mia.']]) })
  const suggest = () => s.inject({ method: 'POST', url: `/v1/notes/${noteId}/speakers/suggest`, headers: a.headers })

  t.test('a failing model: 502 speaker_naming_failed and nothing changed', async (t) => {
    const before = (await s.services.events.readStream(`note-${noteId}`)).events.length
    const r = await suggest()
    t.equal(r.statusCode, 502)
    t.equal(r.json().error, 'speaker_naming_failed')
    answer = () => ({ json: chatCompletion('not json') })
    t.equal((await suggest()).statusCode, 502, 'an unusable answer too')
    t.equal((await s.services.events.readStream(`note-${noteId}`)).events.length, before)
    t.match((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers`, headers: a.headers })).json().speakers[0], { suggestedName: null })
  })

  t.test('answers are checked: unknown labels dropped, quotes must be in their segment', async (t) => {
    answer = () => ({
      json: chatCompletion(
        JSON.stringify({
          speakers: [
            { label: 'A', name: 'Jonas', confidence: 0.95, evidence: [{ source: 'transcript', segment: 0, quote: 'hier ist Jonas' }] },
            { label: 'B', name: 'Mia', confidence: 0.9, evidence: [{ source: 'transcript', segment: 0, quote: 'ich bin Mia' }] },
            { label: 'Q', name: 'Ghost', confidence: 1, evidence: [] },
          ],
        }),
      ),
    })
    const r = await suggest()
    t.equal(r.statusCode, 200)
    t.match(r.json().speakers[0], { label: 'A', name: 'Jonas', nameStatus: 'suggested', suggestedNameConfidence: 0.95, evidence: [{ source: 'transcript', segment: 0, quote: 'hier ist Jonas' }] })
    t.match(r.json().speakers[1], { label: 'B', name: null, suggestedName: null }, 'a quote not found in the segment it names is no evidence')
    t.equal(r.json().speakers.length, 2)
    const prompt = JSON.parse(llm.requests[llm.requests.length - 1]!.json().messages[1].content)
    t.match(prompt, { labels: ['A', 'B'], transcript: '#0 [A] Guten Tag, hier ist Jonas.\n#1 [B] Hallo Jonas, ich bin Mia.' })
  })
})
