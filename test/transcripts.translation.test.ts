// Translations: the state machine (none → pending → running → ready | failed, plus stale after an
// edit) as a decider (the shared DeciderSpecification), then over REST with an OpenAI-compatible test server doing the language
// work, with no engine at all, and with Apertium (the local engine, from Debian packages).
import t from 'tap'
import { testService } from './support/service.ts'
import { readyNote, transcriptOf, eventually, type SegmentSpec } from './support/transcripts.ts'
import { startOpenAiServer, chatCompletion, type RecordedRequest } from './support/openaiServer.ts'
import { evolveNoteTranscript, noteTranscriptDecider, sourceHash, type TranscriptCommand, type TranscriptEvent } from '../domain/notes/noteTranscript.ts'
import { DeciderSpecification } from './support/decider.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import { TRANSLATION_LANGUAGES, preferredLanguage } from '../domain/languages.ts'
import { ANY_SOURCE, type TranslationCapability } from '../domain/transcripts/translationPairs.ts'
import { tidyMachineTranslation } from '../domain/transcripts/tidyTranslation.ts'

const SEGMENTS: SegmentSpec[] = [
  ['A', 0, 2000, 'Hola a todos, bienvenidos.'],
  ['A', 2000, 4000, 'Hoy hablamos con Luis.'],
  ['B', 4000, 6000, 'Gracias por invitarme.'],
  ['A', 6000, 8000, 'Empecemos ya.'],
  ['B', 8000, 9000, 'Muy bien.'],
]

const json = { 'content-type': 'application/json' }

// ---- the decider ------------------------------------------------------------------------------

t.test('translation state machine (decider)', async (t) => {
  const accountId = 'acc-1'
  const transcript = transcriptOf(SEGMENTS)
  const spec = DeciderSpecification.for(noteTranscriptDecider, evolveNoteTranscript)
  const decided = (history: (NoteEvent | TranscriptEvent)[], c: TranscriptCommand) => spec.given(history).when(c).events()
  const created: NoteEvent = {
    type: 'NoteCreated',
    data: { noteId: 'n1', accountId, sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'T', language: null, keepAudio: false, upload: null, jobId: null, reservationId: null, at: 't0' },
  }
  const transcribed: NoteEvent = { type: 'NoteTranscribed', data: { transcript, at: 't1' } }
  const ready: NoteEvent = { type: 'NoteReady', data: { durationSeconds: 9, language: 'es', at: 't2' } }
  const now = '2026-01-01T00:00:00.000Z'
  const anyPair: TranslationCapability = { engine: 'e', model: null, pairs: TRANSLATION_LANGUAGES.map((to) => ({ from: ANY_SOURCE, to })), missingPairsHint: null }
  const request = { type: 'RequestTranslation', accountId, language: 'en', requestId: null, capability: anyPair, now } satisfies TranscriptCommand
  const start = (at = now): TranscriptCommand => ({ type: 'StartTranslation', language: 'en', engine: 'e', model: null, leaseMs: 60_000, now: at })
  const all = transcript.segments.map((s) => ({ sequence: s.sequence, text: `EN ${s.text}`, sourceHash: sourceHash(s.text) }))

  t.test('none → pending for every segment', async (t) => {
    spec.given([created, transcribed, ready]).when(request).thenMatches(t, [{ type: 'TranslationRequested', data: { language: 'en', sourceLanguage: 'es', segments: [0, 1, 2, 3, 4], totalSegments: 5 } }])
  })
  t.test('no transcript: no_transcript; the audio language: same_language', async (t) => {
    spec.given([created]).when(request).thenThrows(t, 'no_transcript')
    spec.given([created, transcribed]).when({ ...request, language: 'es' }).thenThrows(t, 'same_language')
  })
  const requested = decided([created, transcribed, ready], request)
  const started = decided([created, transcribed, ready, ...requested], start())
  t.test('only a pending translation can be claimed; a second claim is refused', async (t) => {
    spec.given([created, transcribed, ready, ...requested]).when(start()).thenMatches(t, [{ type: 'TranslationStarted', data: { attempt: 1 } }])
    spec.given([created, transcribed, ready, ...requested, ...started]).when(start()).thenThrows(t, 'conflict')
  })
  t.test('a run abandoned past its lease is taken over', async (t) => {
    const later = new Date(Date.parse(now) + 61_000).toISOString()
    spec.given([created, transcribed, ready, ...requested, ...started]).when(start(later)).thenMatches(t, [{ type: 'TranslationStarted', data: { attempt: 2 } }])
  })
  t.test('pending or running: a repeated request changes nothing', async (t) => {
    spec.given([created, transcribed, ready, ...requested]).when(request).thenNothingHappened(t)
    spec.given([created, transcribed, ready, ...requested, ...started]).when(request).thenNothingHappened(t)
  })
  const running = [created, transcribed, ready, ...requested, ...started]
  const translated = decided(running, { type: 'RecordTranslatedSegments', language: 'en', segments: all, now })
  const completed = decided([...running, ...translated], { type: 'CompleteTranslation', language: 'en', now })
  t.test('ready, not stale; a repeated request changes nothing (200, free)', async (t) => {
    spec.given([...running, ...translated]).when({ type: 'CompleteTranslation', language: 'en', now }).thenMatches(t, [{ type: 'TranslationCompleted', data: { staleSegments: [] } }])
    spec.given([...running, ...translated, ...completed]).when(request).thenNothingHappened(t)
    const noEngine: TranslationCapability = { engine: 'none', model: null, pairs: [], missingPairsHint: null }
    spec.given([...running, ...translated, ...completed]).when({ ...request, capability: noEngine }).thenNothingHappened(t, 'a translation made earlier stays served when the engine can no longer make it')
  })
  const done = [...running, ...translated, ...completed]
  const edit: TranscriptCommand = { type: 'ReplaceInTranscript', accountId, find: 'luis', replace: 'Luisa', caseSensitive: false, wholeWord: true, now }
  const edited = decided(done, edit)
  t.test('an edit marks the ready translation stale with the changed segments', async (t) => {
    spec.given(done).when(edit).thenMatches(t, [{ type: 'TranscriptTextReplaced', data: { occurrences: 1, staleTranslations: [{ language: 'en', segments: [1] }] } }])
    const s = spec.given([...done, ...edited]).state()
    t.ok(s.exists && s.translations.en!.status === 'ready')
    t.same(s.exists && s.translations.en!.staleSegments, [1])
    t.notOk(s.exists && s.translations.en!.segments[1], 'the changed segment has no translation any more')
    spec.given([...done, ...edited]).when(request).thenMatches(t, [{ type: 'TranslationRequested', data: { segments: [1] } }], 'a new request asks for the missing segment only')
  })
  t.test('a segment edited while it was being translated keeps no translation of the old text', async (t) => {
    const mid = decided(running, edit)
    const late = decided([...running, ...mid], { type: 'RecordTranslatedSegments', language: 'en', segments: all, now })
    t.same(
      (late[0] as Extract<TranscriptEvent, { type: 'TranslationSegmentsTranslated' }>).data.segments.map((s) => s.sequence),
      [0, 2, 3, 4],
    )
    spec.given([...running, ...mid, ...late]).when({ type: 'CompleteTranslation', language: 'en', now }).thenMatches(t, [{ type: 'TranslationCompleted', data: { staleSegments: [1] } }])
  })
  t.test('a pair the engine cannot do is refused when requested, with the pairs it can do', async (t) => {
    const apertium: TranslationCapability = { engine: 'apertium', model: null, pairs: [{ from: 'es', to: 'en' }, { from: 'en', to: 'es' }], missingPairsHint: 'Configure LLM_BASE_URL.' }
    spec
      .given([created, transcribed, ready])
      .when({ ...request, language: 'de', capability: apertium })
      .thenThrows(t, 'translation_pair_unsupported', /cannot translate es→de; it can do es→en, en→es\. Configure LLM_BASE_URL\./, { engine: 'apertium', supportedPairs: apertium.pairs })
    spec.given([created, transcribed, ready]).when({ ...request, capability: apertium }).thenMatches(t, [{ type: 'TranslationRequested', data: { language: 'en' } }], 'es → en is one of its pairs')
    const unknownLanguage: NoteEvent = { type: 'NoteTranscribed', data: { transcript: { ...transcript, language: null, languagesDetected: [] }, at: 't1' } }
    const undetected: NoteEvent = { type: 'NoteReady', data: { durationSeconds: 9, language: null, at: 't2' } }
    spec.given([created, unknownLanguage, undetected]).when({ ...request, capability: apertium }).thenThrows(t, 'translation_pair_unsupported', /whose language is unknown/)
    spec.given([created, unknownLanguage, undetected]).when(request).thenMatches(t, [{ type: 'TranslationRequested' }], 'an engine that takes any language does not need to know it')
    const none: TranslationCapability = { engine: 'none', model: null, pairs: [], missingPairsHint: 'No translation engine is configured.' }
    spec.given([created, transcribed, ready]).when({ ...request, capability: none }).thenThrows(t, 'translation_pair_unsupported', /^No translation engine is configured\.$/, { engine: 'none', supportedPairs: [] })
    spec.given([created, transcribed]).when({ ...request, language: 'es', capability: none }).thenThrows(t, 'same_language')
  })
  t.test('failed, then requested again', async (t) => {
    const fail: TranscriptCommand = { type: 'FailTranslation', language: 'en', errorCode: 'translation_engine_failed', message: 'boom', now }
    spec.given(running).when(fail).thenMatches(t, [{ type: 'TranslationFailed', data: { errorCode: 'translation_engine_failed' } }])
    spec.given([...running, ...decided(running, fail)]).when(request).thenMatches(t, [{ type: 'TranslationRequested' }])
  })
})

t.test('default language: the first of the six in Accept-Language, else en', async (t) => {
  t.equal(preferredLanguage(undefined), 'en')
  t.equal(preferredLanguage('fr-CH, fr;q=0.9, en;q=0.8'), 'fr')
  t.equal(preferredLanguage('ja, pt-BR;q=0.5, de;q=0.7'), 'de')
  t.equal(preferredLanguage('zh'), 'en')
})

// ---- over REST, with an OpenAI-compatible server ------------------------------------------------

t.test('REST with an OpenAI-compatible model', async (t) => {
  let failing = false
  const llm = await startOpenAiServer((req: RecordedRequest) => {
    if (failing) return { status: 503, json: { error: { message: 'overloaded' } } }
    const input = JSON.parse(req.json().messages[1].content) as { segments: { sequence: number; text: string }[] }
    return { json: chatCompletion(JSON.stringify({ segments: input.segments.map((s) => ({ sequence: s.sequence, text: `EN(${s.text})` })) })) }
  })
  t.teardown(llm.close)
  const s = await testService({ workers: true, env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'translator-1', TRANSLATION_POLL_MS: '50' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf(SEGMENTS) })
  const url = `/v1/notes/${noteId}/transcript/translation`
  const getState = async (language: string) => (await s.inject({ method: 'GET', url: `${url}?language=${language}`, headers: a.headers })).json()
  const post = (body: unknown, headers: Record<string, string> = {}) => s.inject({ method: 'POST', url, headers: { ...a.headers, ...json, ...headers }, payload: JSON.stringify(body) })
  const until = (language: string, status: string) => eventually(async () => {
    const st = await getState(language)
    return st.status === status ? st : undefined
  })

  t.test('never requested: status none, free to read', async (t) => {
    const r = await s.inject({ method: 'GET', url: `${url}?language=en`, headers: a.headers })
    t.equal(r.statusCode, 200)
    t.match(r.json(), { noteId, language: 'en', status: 'none', stale: false, progress: { translatedSegments: 0, totalSegments: 5, percent: 0 }, segments: [] })
  })

  t.test('errors', async (t) => {
    for (const [r, status, code] of [
      [await s.inject({ method: 'GET', url: `${url}?language=xx`, headers: a.headers }), 400, 'invalid_language'],
      [await post({ language: 'xx' }), 400, 'invalid_language'],
      [await post({ language: 'es' }), 409, 'same_language'],
      [await s.inject({ method: 'POST', url: '/v1/notes/00000000-0000-4000-8000-000000000000/transcript/translation', headers: { ...a.headers, ...json }, payload: '{"language":"en"}' }), 404, 'no_transcript'],
      [await s.inject({ method: 'GET', url: '/v1/notes/00000000-0000-4000-8000-000000000000/transcript/translation?language=en', headers: a.headers }), 404, 'no_transcript'],
    ] as const) {
      t.equal(r.statusCode, status)
      t.equal(r.json().error, code)
    }
  })

  t.test('the model translates from any language into the six', async (t) => {
    const r = await s.inject({ method: 'GET', url: '/v1/translation/pairs', headers: a.headers })
    t.equal(r.statusCode, 200)
    t.same(r.json(), { engine: 'openai-compatible', model: 'translator-1', pairs: TRANSLATION_LANGUAGES.map((to) => ({ from: '*', to })), missingPairsHint: null })
    t.equal((await s.inject({ method: 'GET', url: '/v1/translation/pairs' })).statusCode, 401, 'with an API key only')
  })

  t.test('POST queues (202 with progress), the worker makes it ready, aligned by sequence', async (t) => {
    const r = await post({ language: 'en' })
    t.equal(r.statusCode, 202)
    t.match(r.json(), { status: /^(pending|running)$/, progress: { totalSegments: 5 } })
    const ready = await until('en', 'ready')
    t.match(ready, { stale: false, staleSegments: [], engine: 'openai-compatible', model: 'translator-1', progress: { translatedSegments: 5, totalSegments: 5, percent: 100 }, errorCode: null })
    t.same(
      ready.segments.map((x: { sequence: number; text: string }) => [x.sequence, x.text]),
      SEGMENTS.map(([, , , text], i) => [i, `EN(${text})`]),
    )
  })

  t.test('POST again when done: 200, nothing appended, nothing charged', async (t) => {
    const before = (await s.services.events.readStream(`note-${noteId}`)).events.length
    const credits = (await s.services.credits.state(a.accountId)).state.balance
    const r = await post({ language: 'en' })
    t.equal(r.statusCode, 200)
    t.equal(r.json().status, 'ready')
    t.equal((await s.services.events.readStream(`note-${noteId}`)).events.length, before)
    t.equal((await s.services.credits.state(a.accountId)).state.balance, credits)
  })

  t.test('an edit makes it stale; a new POST translates only the changed segment', async (t) => {
    const edit = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/transcript/replace`, headers: { ...a.headers, ...json }, payload: { find: 'luis', replace: 'Luisa' } })
    t.equal(edit.statusCode, 200)
    t.match(edit.json(), { occurrences: 1, changedSegments: [{ sequence: 1, before: 'Hoy hablamos con Luis.', after: 'Hoy hablamos con Luisa.' }], staleTranslations: [{ language: 'en', segments: [1] }] })
    const stale = await getState('en')
    t.match(stale, { status: 'ready', stale: true, staleSegments: [1], progress: { translatedSegments: 4, totalSegments: 5 } })
    t.equal(stale.segments[1].text, null, 'the stale segment is missing again')
    const exported = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript?translation=en`, headers: a.headers })
    t.equal(exported.headers['x-translation-status'], 'stale')
    t.notOk('translation' in exported.json().segments[1], 'a stale segment has no translation field, never null (issue 17, item 5)')
    t.equal(exported.json().segments[0].translation, 'EN(Hola a todos, bienvenidos.)')

    const asked = llm.requests.length
    const again = await post({ language: 'en' })
    t.equal(again.statusCode, 202, 'a stale translation is queued again')
    const ready = await until('en', 'ready')
    t.match(ready, { stale: false, staleSegments: [] })
    t.equal(ready.segments[1].text, 'EN(Hoy hablamos con Luisa.)')
    const sent = llm.requests.slice(asked).map((r) => JSON.parse(r.json().messages[1].content).segments.map((x: { sequence: number }) => x.sequence))
    t.same(sent, [[1]], 'only the changed segment went to the model')
  })

  t.test('engine failure: failed with an errorCode; a new POST queues it again', async (t) => {
    failing = true
    t.equal((await post({ language: 'de' })).statusCode, 202)
    const failed = await until('de', 'failed')
    t.match(failed, { errorCode: 'translation_engine_failed', message: /503|overloaded/ })
    failing = false
    t.equal((await post({ language: 'de' })).statusCode, 202)
    t.match(await until('de', 'ready'), { errorCode: null, progress: { translatedSegments: 5 } })
  })

  t.test('language defaults to Accept-Language', async (t) => {
    const r = await s.inject({ method: 'POST', url, headers: { ...a.headers, 'accept-language': 'it-IT,it;q=0.9,en;q=0.5' } })
    t.equal(r.statusCode, 202)
    t.equal(r.json().language, 'it')
    const g = await s.inject({ method: 'GET', url, headers: { ...a.headers, 'accept-language': 'it' } })
    t.equal(g.json().language, 'it')
  })
})

t.test('no engine configured: refused when requested, saying what to configure', async (t) => {
  const s = await testService({ workers: true, env: { TRANSLATION_ENGINE: 'none', TRANSLATION_POLL_MS: '50' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf(SEGMENTS) })
  const balance = (await s.services.credits.state(a.accountId)).state.balance
  const r = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/transcript/translation`, headers: { ...a.headers, ...json }, payload: '{"language":"en"}' })
  t.equal(r.statusCode, 409)
  t.match(r.json(), { error: 'translation_pair_unsupported', message: /LLM_BASE_URL.*apertium/, engine: 'none', supportedPairs: [] })
  t.same((await s.inject({ method: 'GET', url: '/v1/translation/pairs', headers: a.headers })).json(), { engine: 'none', model: null, pairs: [], missingPairsHint: r.json().message })
  t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript/translation?language=en`, headers: a.headers })).json().status, 'none', 'nothing was queued')
  t.equal((await s.services.credits.state(a.accountId)).state.balance, balance, 'nothing was charged')

  // A request another process accepted (its engine could do the pair) fails in this worker,
  // whose engine cannot, with the errorCode that says so.
  const anyPair: TranslationCapability = { engine: 'elsewhere', model: null, pairs: TRANSLATION_LANGUAGES.map((to) => ({ from: ANY_SOURCE, to })), missingPairsHint: null }
  await s.services.handler.handle(`note-${noteId}`, { type: 'RequestTranslation', accountId: a.accountId, language: 'en', requestId: null, capability: anyPair, now: new Date().toISOString() }, noteTranscriptDecider)
  s.services.transcriptFeatures.translationQueue.wake()
  const failed = await eventually(async () => {
    const st = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript/translation?language=en`, headers: a.headers })).json()
    return st.status === 'failed' ? st : undefined
  })
  t.match(failed, { errorCode: 'translation_engine_unavailable', message: /LLM_BASE_URL/, segments: [null, null, null, null, null].map(() => ({ text: null })) })
})

t.test('Apertium, the local engine', async (t) => {
  const s = await testService({ workers: true, env: { TRANSLATION_ENGINE: 'apertium', TRANSLATION_POLL_MS: '50' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf(SEGMENTS) })
  const state = (language: string) =>
    eventually(async () => {
      const st = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript/translation?language=${language}`, headers: a.headers })).json()
      return st.status === 'ready' || st.status === 'failed' ? st : undefined
    }, 30_000)
  const post = (language: string) => s.inject({ method: 'POST', url: `/v1/notes/${noteId}/transcript/translation`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ language }) })
  const pairs = (await s.inject({ method: 'GET', url: '/v1/translation/pairs', headers: a.headers })).json()
  t.match(pairs, { engine: 'apertium', model: null, missingPairsHint: /German.*LLM_BASE_URL/ })
  const has = (from: string, to: string) => pairs.pairs.some((p: { from: string; to: string }) => p.from === from && p.to === to)
  t.ok(has('es', 'en') && has('en', 'es') && has('es', 'pt') && has('fr', 'es'), 'the installed pairs')
  t.ok(has('en', 'pt') && has('it', 'fr'), 'and those through Spanish')
  t.notOk(pairs.pairs.some((p: { to: string }) => p.to === 'de'), 'nothing into German')

  const balance = (await s.services.credits.state(a.accountId)).state.balance
  const de = await post('de')
  t.equal(de.statusCode, 409, 'German is refused when requested, not queued to fail')
  t.match(de.json(), { error: 'translation_pair_unsupported', message: /es→de.*LLM_BASE_URL/, engine: 'apertium', supportedPairs: pairs.pairs })
  t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/transcript/translation?language=de`, headers: a.headers })).json().status, 'none')
  t.equal((await s.services.credits.state(a.accountId)).state.balance, balance, 'nothing was charged')

  for (const language of ['en', 'pt']) t.equal((await post(language)).statusCode, 202, language)
  const en = await state('en')
  t.match(en, { status: 'ready', engine: 'apertium', progress: { translatedSegments: 5 } }, 'es → en directly')
  // Tidied: Apertium writes "Hello To all, welcome." and "Thank you For inviting me."
  t.equal(en.segments[0].text, 'Hello to all, welcome.')
  t.equal(en.segments[2].text, 'Thank you for inviting me.')
  const pt = await state('pt')
  t.match(pt, { status: 'ready', engine: 'apertium' }, 'es → pt')
  t.match(pt.segments[0].text, /Olá/)
})

t.test("Apertium's output tidied: spacing around punctuation, capitals mid-sentence", async (t) => {
  t.equal(tidyMachineTranslation('Hello everyone, I am Alice Johnson.', 'Hola Todo el mundo,  soy Alice Johnson .', 'es'), 'Hola todo el mundo, soy Alice Johnson.')
  t.equal(tidyMachineTranslation('¿Qué tal?', ' ¿ Qué tal ? Bien ,  y Tú ?', 'es'), '¿Qué tal? Bien, y tú?', 'opening marks, and a capital after one')
  t.equal(tidyMachineTranslation('Yo y Will vamos. ¿Y tú?', 'I and Will go.  And you ?', 'en'), 'I and Will go. And you?', 'a name the source capitalises, "I", and sentence starts keep theirs')
  t.equal(tidyMachineTranslation('I live in London with Anna', 'Vivo en Londres con Anna', 'es'), 'Vivo en Londres con Anna', 'names are not function words')
  t.equal(tidyMachineTranslation('Hola a todos', 'Salut À tous , je suis là ! « Oui »', 'fr'), 'Salut à tous, je suis là ! « Oui »', 'French keeps its space before ! and inside guillemets')
  t.equal(tidyMachineTranslation('Hallo', 'Wir danken Ihnen', 'de'), 'Wir danken Ihnen', 'German is left alone')
})
