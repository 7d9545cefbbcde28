// GET /v1/notes/{id}/transcript in every format, byte for byte against test/fixtures/transcript/
// (two named speakers, non-ASCII text, a cue past the hour), with and without a translation;
// content types; 1 credit per read in the ledger, refunded when a read fails; the errors.
// UPDATE_FIXTURES=1 rewrites the expected files (review the diff before committing).
import t, { type Test } from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { testService } from './support/service.ts'
import { readyNote, eventually } from './support/transcripts.ts'
import { startOpenAiServer, chatCompletion } from './support/openaiServer.ts'
import type { Transcript } from '../domain/notes/transcript.ts'
import { ledgerEntries } from '../readmodels/ledger.ts'
import { clock, renderText, stamp, TEXT_FORMATS } from '../domain/transcripts/formats.ts'
import { TranscriptCommands } from '../commands/transcripts.ts'
import { getTranscript, getTranslation } from '../readmodels/transcripts.ts'
import { readQueries } from '../readmodels/queries.ts'
import type { DocumentStore } from '../ports/documentStore.ts'

const FIXTURES = join(import.meta.dirname, 'fixtures', 'transcript')
const NOTE_ID = '7d3f1c2a-5b6e-4f70-8a91-0c2d3e4f5a6b'

const TRANSCRIPT: Transcript = {
  language: 'es-ES',
  languagesDetected: ['es'],
  durationSeconds: 3726,
  engine: 'test',
  provider: 'published',
  model: 'fixture-1',
  segments: [
    {
      id: '0b9e4c1e-8f3a-4d2b-9c7e-1a2b3c4d5e01',
      sequence: 0,
      startMs: 0,
      endMs: 3200,
      speakerLabel: 'A',
      text: '¡Hola a todos! Bienvenidos a «Café con Ñandú».',
      confidence: 0.97,
      locale: 'es-ES',
      words: [
        { text: '¡Hola', startMs: 0, endMs: 420 },
        { text: 'a', startMs: 420, endMs: 500 },
        { text: 'todos!', startMs: 500, endMs: 900 },
      ],
    },
    { id: '0b9e4c1e-8f3a-4d2b-9c7e-1a2b3c4d5e02', sequence: 1, startMs: 3200, endMs: 7450, speakerLabel: 'A', text: 'Hoy hablamos con Luis sobre el año que viene.', confidence: 0.95, locale: 'es-ES', words: null },
    { id: '0b9e4c1e-8f3a-4d2b-9c7e-1a2b3c4d5e03', sequence: 2, startMs: 7450, endMs: 12005, speakerLabel: 'B', text: 'Gracias, María. Es un placer estar aquí… ¿Empezamos?', confidence: 0.93, locale: 'es-ES', words: null },
    { id: '0b9e4c1e-8f3a-4d2b-9c7e-1a2b3c4d5e04', sequence: 3, startMs: 12005, endMs: 65030, speakerLabel: 'A', text: 'Claro. Primero: ¿qué es mayor, 3 < 5 o 5 > 3? Pregunta de niños & mayores.', confidence: null, locale: 'es-ES', words: null },
    { id: '0b9e4c1e-8f3a-4d2b-9c7e-1a2b3c4d5e05', sequence: 4, startMs: 3720000, endMs: 3725400, speakerLabel: 'B', text: 'Über Zürich, Œuvre y São Paulo — ¡adiós!', confidence: 0.9, locale: 'es-ES', words: null },
  ],
}

const ENGLISH: Record<string, string> = {
  '¡Hola a todos! Bienvenidos a «Café con Ñandú».': 'Hello everyone! Welcome to «Café con Ñandú».',
  'Hoy hablamos con Luis sobre el año que viene.': 'Today we talk with Luis about next year.',
  'Gracias, María. Es un placer estar aquí… ¿Empezamos?': 'Thank you, María. It is a pleasure to be here… Shall we start?',
  'Claro. Primero: ¿qué es mayor, 3 < 5 o 5 > 3? Pregunta de niños & mayores.': 'Sure. First: which is greater, 3 < 5 or 5 > 3? A question for kids & grown-ups.',
  'Über Zürich, Œuvre y São Paulo — ¡adiós!': 'Über Zürich, Œuvre and São Paulo — goodbye!',
}

function expectFile(t: Test, name: string, actual: string) {
  const path = join(FIXTURES, name)
  if (process.env.UPDATE_FIXTURES === '1') writeFileSync(path, actual)
  t.equal(actual, readFileSync(path, 'utf8'), `${name} byte for byte`)
}

t.test('clock and stamp formats', async (t) => {
  t.equal(clock(0, ','), '00:00:00,000')
  t.equal(clock(3_725_400, ','), '01:02:05,400')
  t.equal(clock(65_030, '.'), '00:01:05.030')
  t.equal(stamp(0), '[00:00]')
  t.equal(stamp(65_999), '[01:05]')
  t.equal(stamp(3_725_400), '[62:05]')
})

t.test('hostile titles, names and text: no raw HTML in md, srt and vtt, no bidirectional or control characters anywhere (issue 26, item 6)', async (t) => {
  const input = {
    title: '<script>alert(1)</script> Minutes \u202Etxt.exe',
    segments: [
      { sequence: 0, startMs: 0, endMs: 1000, speakerLabel: 'A', speakerName: '<img src=x onerror=alert(1)>\u2066Bob\u2069\u0007', text: 'We <b>ship</b> & \u202Edaolnwod\u202C it.' },
    ],
  }
  for (const format of TEXT_FORMATS) {
    const out = renderText(format, input)
    t.notMatch(out, /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u0007]/, `${format}: no bidi or control character`)
    t.match(out, /Bob/, `${format}: the name is still there`)
    if (format !== 'txt') {
      t.notMatch(out.replace(/^<v [^>]*>/gm, ''), /<(script|img|b)\b/i, `${format}: no tag a viewer would run`)
      t.match(out, format === 'vtt' ? /&lt;b&gt;ship&lt;\/b&gt; &amp;/ : /&lt;b>ship&lt;\/b> &/, `${format}: shown as written`)
    }
  }
  t.match(renderText('md', input), /^# &lt;script>alert\(1\)&lt;\/script> Minutes txt\.exe\n/)
  t.match(renderText('md', { ...input, title: 'Tom &amp; Jerry &#60;3' }), /^# Tom &amp;amp; Jerry &amp;#60;3\n/, 'an entity is shown, not decoded')
  t.match(renderText('txt', input), /^&?<img src=x onerror=alert\(1\)>Bob: We <b>ship<\/b> & daolnwod it\.\n$/, 'txt (text/plain, nosniff) keeps the characters as they are, without the controls')
})

t.test('exports', async (t) => {
  // The translation comes from an OpenAI-compatible server that knows the fixture's sentences.
  // While `held` is set, the model answers only once it is released (a translation stays running).
  let held = null as { promise: Promise<void>; release: () => void } | null
  const llm = await startOpenAiServer(async (req) => {
    await held?.promise
    const body = req.json()
    const input = JSON.parse(body.messages[1].content) as { segments: { sequence: number; text: string }[] }
    return { json: chatCompletion(JSON.stringify({ segments: input.segments.map((s) => ({ sequence: s.sequence, text: ENGLISH[s.text] ?? `?${s.text}` })) })) }
  })
  t.teardown(llm.close)
  const s = await testService({ workers: true, env: { LLM_BASE_URL: llm.baseUrl, TRANSLATION_POLL_MS: '50' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  await readyNote(s, a.accountId, { noteId: NOTE_ID, title: 'Café con Ñandú #12: el año que viene', transcript: TRANSCRIPT })
  for (const [label, name] of [
    ['A', 'María José Núñez'],
    ['B', 'Luis Ångström'],
  ]) {
    const r = await s.inject({ method: 'PATCH', url: `/v1/notes/${NOTE_ID}/speakers/${label}`, headers: { ...a.headers, 'content-type': 'application/json' }, payload: { name } })
    t.equal(r.statusCode, 200)
  }
  const get = (query: string) => s.inject({ method: 'GET', url: `/v1/notes/${NOTE_ID}/transcript${query}`, headers: a.headers })
  const charges = async (accountId: string) => (await s.services.events.readStream(`credits-${accountId}`)).events.filter((e) => e.type === 'CreditsCharged').length
  let reads = 0

  t.test('each format with its content type', async (t) => {
    const types: Record<string, string> = {
      json: 'application/json; charset=utf-8',
      txt: 'text/plain; charset=utf-8',
      srt: 'application/x-subrip; charset=utf-8',
      vtt: 'text/vtt; charset=utf-8',
      md: 'text/markdown; charset=utf-8',
    }
    for (const [format, type] of Object.entries(types)) {
      const r = await get(`?format=${format}`)
      reads++
      t.equal(r.statusCode, 200, format)
      t.equal(r.headers['content-type'], type, `${format} content type`)
      expectFile(t, `transcript.${format}`, format === 'json' ? `${JSON.stringify(r.json(), null, 2)}\n` : r.body)
    }
    const dflt = await get('')
    reads++
    t.equal(dflt.headers['content-type'], types.json)
    t.same(dflt.json(), JSON.parse(readFileSync(join(FIXTURES, 'transcript.json'), 'utf8')), 'json is the default')
  })

  t.test('with a translation', async (t) => {
    const post = await s.inject({ method: 'POST', url: `/v1/notes/${NOTE_ID}/transcript/translation`, headers: { ...a.headers, 'content-type': 'application/json' }, payload: { language: 'en' } })
    t.equal(post.statusCode, 202)
    await eventually(async () => {
      const r = await s.inject({ method: 'GET', url: `/v1/notes/${NOTE_ID}/transcript/translation?language=en`, headers: a.headers })
      return r.json().status === 'ready' ? true : undefined
    })
    for (const format of ['json', 'txt', 'srt', 'vtt', 'md']) {
      for (const mode of ['both', 'translation']) {
        if (format === 'json' && mode === 'translation') continue
        const r = await get(`?format=${format}&translation=en${format === 'json' ? '' : `&translationMode=${mode}`}`)
        reads++
        t.equal(r.statusCode, 200)
        t.equal(r.headers['x-translation-status'], 'ready')
        expectFile(t, `transcript.en-${mode}.${format}`, format === 'json' ? `${JSON.stringify(r.json(), null, 2)}\n` : r.body)
      }
    }
    // `both` is the default mode.
    const dflt = await get('?format=srt&translation=en')
    reads++
    t.equal(dflt.body, readFileSync(join(FIXTURES, 'transcript.en-both.srt'), 'utf8'))
    // A translation never requested: 404 no_transcript, never the original in its place (issue 30).
    const before = await charges(a.accountId)
    for (const q of ['?format=txt&translation=fr', '?translation=fr', '?format=srt&translation=fr&translationMode=translation']) {
      const none = await get(q)
      t.equal(none.statusCode, 404, q)
      t.match(none.json(), { error: 'no_transcript', message: /no fr translation.*POST \/v1\/notes\/.*\/transcript\/translation/ }, q)
    }
    const same = await get('?translation=es')
    t.match(same.json(), { error: 'no_transcript', message: /already in es/ }, 'the audio’s own language: read it without translation')
    t.equal(await charges(a.accountId), before, 'none of them is charged')
    // Requested, not translated yet: served, with the state in the header and no translation field.
    let release = () => {}
    held = { promise: new Promise<void>((resolve) => (release = resolve)), release: () => release() }
    t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${NOTE_ID}/transcript/translation`, headers: { ...a.headers, 'content-type': 'application/json' }, payload: { language: 'fr' } })).statusCode, 202)
    const pending = await get('?translation=fr')
    reads++
    t.equal(pending.statusCode, 200)
    t.match(pending.headers['x-translation-status'], /^(pending|running)$/)
    t.ok(pending.json().segments.every((seg: object) => !('translation' in seg)), 'json segments have no translation field, never null (the spec types it as a string)')
    held.release()
    held = null
  })


  t.test('errors: 400 invalid_format, 400 invalid_language, 404 no_transcript; none of them charged', async (t) => {
    const before = await charges(a.accountId)
    for (const q of ['?format=pdf', '?format=', '?translationMode=all']) {
      const r = await get(q)
      t.equal(r.statusCode, 400, q)
      t.equal(r.json().error, 'invalid_format')
    }
    const lang = await get('?translation=xx')
    t.equal(lang.statusCode, 400)
    t.equal(lang.json().error, 'invalid_language')
    const processing = await readyNote(s, a.accountId, { transcript: TRANSCRIPT, ready: false })
    t.equal((await get('')).statusCode, 200, 'sanity')
    reads++
    const unknown = await s.inject({ method: 'GET', url: '/v1/notes/00000000-0000-4000-8000-000000000000/transcript', headers: a.headers })
    t.equal(unknown.statusCode, 404)
    t.equal(unknown.json().error, 'no_transcript')
    const other = await s.account('pro')
    const foreign = await s.inject({ method: 'GET', url: `/v1/notes/${NOTE_ID}/transcript`, headers: other.headers })
    t.equal(foreign.statusCode, 404)
    t.equal(foreign.json().error, 'no_transcript')
    const created = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: { filename: 'a.wav', contentType: 'audio/wav' } })
    const untranscribed = await s.inject({ method: 'GET', url: `/v1/notes/${created.json().noteId}/transcript`, headers: a.headers })
    t.equal(untranscribed.statusCode, 404)
    t.equal(untranscribed.json().error, 'no_transcript')
    t.ok(processing)
    t.equal(await charges(a.accountId), before + 1, 'only the one successful read was charged')
  })

  t.test('every read is one CreditsCharged of 1 credit for this note in the ledger', async (t) => {
    const entries = await eventually(async () => {
      const list = (await ledgerEntries(s.docs, a.accountId)).filter((e) => e.operation === 'transcript')
      return list.length >= reads ? list : undefined
    })
    t.equal(entries.length, reads)
    t.ok(entries.every((e) => e.type === 'CreditsCharged' && e.delta === -1))
    t.equal(entries.filter((e) => e.noteId === NOTE_ID).length, reads, 'each names the note read')
  })

  t.test('the query truncates on request (the free plan over MCP), and costs nothing by itself', async (t) => {
    const before = (await s.services.credits.state(a.accountId)).state.balance
    const cut = await getTranscript(s.docs, a.accountId, NOTE_ID, { limit: { maxSegments: 2 } })
    t.equal(cut.segments.length, 2)
    t.equal(cut.truncated, true)
    t.equal(cut.fullText, '¡Hola a todos! Bienvenidos a «Café con Ñandú». Hoy hablamos con Luis sobre el año que viene.')
    const chars = await getTranscript(s.docs, a.accountId, NOTE_ID, { limit: { maxChars: 10 } })
    t.same(chars.segments.map((x) => x.text), ['¡Hola a to'])
    const whole = await getTranscript(s.docs, a.accountId, NOTE_ID, { limit: { maxSegments: 100 } })
    t.equal(whole.truncated, undefined)
    const tr = await getTranslation(s.docs, a.accountId, NOTE_ID, 'en', { maxSegments: 1 })
    t.match(tr, { truncated: true, segments: [{ sequence: 0, text: 'Hello everyone! Welcome to «Café con Ñandú».' }] })
    t.equal((await s.services.credits.state(a.accountId)).state.balance, before)
  })

  t.test('402 insufficient_credits when the balance is spent', async (t) => {
    const poor = await s.account('pro')
    await readyNote(s, poor.accountId, { transcript: TRANSCRIPT, noteId: '1d3f1c2a-5b6e-4f70-8a91-0c2d3e4f5a6b' })
    const { state } = await s.services.credits.state(poor.accountId)
    await s.services.credits.charge(poor.accountId, { operation: 'test drain', cost: state.balance })
    const r = await s.inject({ method: 'GET', url: '/v1/notes/1d3f1c2a-5b6e-4f70-8a91-0c2d3e4f5a6b/transcript?format=txt', headers: poor.headers })
    t.equal(r.statusCode, 402)
    t.match(r.json(), { error: 'insufficient_credits', balance: 0, required: 1 })
  })

  t.test('a read that fails after the charge is refunded by an event', async (t) => {
    // The same command over a read-model store whose speakers collection breaks mid-read.
    const broken: DocumentStore = {
      collection: (name: string) => {
        const c = s.docs.collection(name)
        return name === 'speakers' ? { ...c, findOne: async () => Promise.reject(new Error('disk on fire')) } : c
      },
      close: async () => {},
    } as DocumentStore
    const commands = new TranscriptCommands({ handler: s.services.handler, credits: s.services.credits, reads: readQueries(broken, { baseUrl: 'http://x' }).transcripts, sync: s.services.sync, namer: { engine: 'x', model: null, suggest: async () => [] }, translationCapability: async () => (await s.services.transcriptFeatures.translator()).capability })
    const caller = { accountId: a.accountId, plan: 'pro' as const, keyId: null, requestId: 'req-refund', via: 'rest' as const }
    const before = (await s.services.credits.state(a.accountId)).state.balance
    await t.rejects(commands.readTranscript(caller, NOTE_ID, { format: 'txt' }), /disk on fire/)
    const after = (await s.services.credits.state(a.accountId)).state.balance
    t.equal(after, before, 'balance restored')
    // The failure is an event; the refund process manager refunds from it (issue 14, item 3).
    const events = (await s.services.events.readStream(`credits-${a.accountId}`)).events.slice(-3)
    t.same(
      events.map((e) => e.type),
      ['CreditsCharged', 'CreditsChargeFailed', 'CreditsRefunded'],
    )
    t.equal(events[2]!.data.chargeId, events[0]!.data.chargeId)
  })
})
