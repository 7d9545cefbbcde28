// The transcript read models on MongoDB (FerretDB, which `npm test` starts): an export with
// names, an edit, a translation through the worker, the speakers, the roster, a line given to
// another speaker (undone, then a merge) and voice profiles,
// so every query and update these projections use works on the real wire protocol too.
// MONGO_URL unset: nothing to run here; say so and pass.
import t from 'tap'
import { testService } from './support/service.ts'
import { readyNote, transcriptOf, eventually } from './support/transcripts.ts'
import { startOpenAiServer, chatCompletion } from './support/openaiServer.ts'

if (!process.env.MONGO_URL) {
  t.skip('transcript read models on MongoDB not run: MONGO_URL is not set (npm test starts FerretDB and sets it)', () => {})
} else {
  t.test('on MongoDB', async (t) => {
    const llm = await startOpenAiServer((req) => {
      const body = req.json()
      if (body.response_format?.json_schema?.name === 'speaker_names') {
        // Names the first speaker after the first roster person it is given (what the roster query found).
        const prompt = JSON.parse(body.messages[1].content) as { roster: { name: string }[] }
        const person = prompt.roster[0]
        const speakers = person ? [{ label: 'A', name: person.name, confidence: 0.6, evidence: [{ source: 'roster', segment: null, quote: person.name }] }] : []
        return { json: chatCompletion(JSON.stringify({ speakers })) }
      }
      const input = JSON.parse(body.messages[1].content) as { segments: { sequence: number; text: string }[] }
      return { json: chatCompletion(JSON.stringify({ segments: input.segments.map((s) => ({ sequence: s.sequence, text: `EN(${s.text})` })) })) }
    })
    t.teardown(llm.close)
    const s = await testService({ mongo: true, workers: true, env: { LLM_BASE_URL: llm.baseUrl, TRANSLATION_POLL_MS: '50' } })
    t.teardown(s.close)
    const a = await s.account('pro')
    const feed = 'https://feeds.example.org/mongo/feed.rss'
    const json = { ...a.headers, 'content-type': 'application/json' }
    const ep1 = await readyNote(s, a.accountId, { sourceUrl: feed, transcript: transcriptOf([['A', 0, 1000, 'Hola, soy Ana.'], ['B', 1000, 2000, 'Gracias, Ana.']]) })
    t.equal((await s.inject({ method: 'PATCH', url: `/v1/notes/${ep1}/speakers/A`, headers: json, payload: { name: 'Ana García' } })).statusCode, 200)
    const txt = await s.inject({ method: 'GET', url: `/v1/notes/${ep1}/transcript?format=txt`, headers: a.headers })
    t.equal(txt.body, 'Ana García: Hola, soy Ana.\nSpeaker B: Gracias, Ana.\n')

    const edit = await s.inject({ method: 'POST', url: `/v1/notes/${ep1}/transcript/replace`, headers: json, payload: { find: 'gracias', replace: 'Muchas gracias' } })
    t.equal(edit.json().occurrences, 1)
    t.same((await s.inject({ method: 'GET', url: '/v1/notes?q=muchas', headers: a.headers })).json().notes.map((n: { id: string }) => n.id), [ep1])

    t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${ep1}/transcript/translation`, headers: json, payload: { language: 'en' } })).statusCode, 202)
    const ready = await eventually(async () => {
      const st = (await s.inject({ method: 'GET', url: `/v1/notes/${ep1}/transcript/translation?language=en`, headers: a.headers })).json()
      return st.status === 'ready' ? st : undefined
    })
    t.same(ready.segments.map((x: { text: string }) => x.text), ['EN(Hola, soy Ana.)', 'EN(Muchas gracias, Ana.)'])

    const ep2 = await readyNote(s, a.accountId, { sourceUrl: feed, transcript: transcriptOf([['A', 0, 1000, 'Bienvenidos.'], ['B', 1000, 2000, 'Hola.']]) })
    const suggested = (await s.inject({ method: 'POST', url: `/v1/notes/${ep2}/speakers/suggest`, headers: a.headers })).json()
    t.match(suggested.speakers[0], { suggestedName: 'Ana García', evidence: [{ source: 'roster' }] }, 'the roster query works')
    const timeline = (await s.inject({ method: 'GET', url: `/v1/notes/${ep1}/speakers/timeline`, headers: a.headers })).json()
    t.equal(timeline.turns[0].speakerName, 'Ana García')

    // Who said a line, corrected: the transcript and talk time documents follow on the wire protocol too.
    const moved = await s.inject({ method: 'PATCH', url: `/v1/notes/${ep1}/segments/1/speaker`, headers: json, payload: { speakerLabel: 'A' } })
    t.equal(moved.statusCode, 200, moved.body)
    t.match(moved.json().speakers, [{ label: 'A', name: 'Ana García', segmentCount: 2, speechSeconds: 2 }])
    t.equal(moved.json().speakers.length, 1, 'B has no line left')
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${ep1}/transcript?format=txt`, headers: a.headers })).body, 'Ana García: Hola, soy Ana.\nAna García: Muchas gracias, Ana.\n')
    const oneTurn = (await s.inject({ method: 'GET', url: `/v1/notes/${ep1}/speakers/timeline`, headers: a.headers })).json()
    t.match(oneTurn.turns, [{ speakerLabel: 'A', firstSegment: 0, lastSegment: 1, segmentCount: 2 }])
    t.equal(oneTurn.turns.length, 1)
    const undone = await s.inject({ method: 'POST', url: `/v1/notes/${ep1}/speakers/undo`, headers: a.headers })
    t.match(undone.json().speakers, [{ label: 'A', segmentCount: 1 }, { label: 'B', segmentCount: 1 }], 'undone')
    const merged = await s.inject({ method: 'POST', url: `/v1/notes/${ep1}/speakers/B/merge`, headers: json, payload: { into: 'A' } })
    t.match(merged.json().speakers, [{ label: 'A', segmentCount: 2 }])

    const profiles = (await s.inject({ method: 'GET', url: '/v1/voice-profiles', headers: a.headers })).json()
    t.match(profiles, { consent: { status: 'never' }, profiles: [] })
  })
}
