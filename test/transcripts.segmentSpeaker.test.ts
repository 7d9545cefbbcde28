// A line the diarizer gave to the wrong voice, corrected by a person (REST extension
// PATCH /v1/notes/{id}/segments/{sequence}/speaker, mounted on the dashboard as every REST
// operation a person does there). Given a meeting whose line "I will send
// the budget report" went to B though A said it, when the person gives that line to A, then the
// transcript, the speakers' talk time, the timeline, the exports and an analysis made afterwards
// all say A said it; the line keeps its id, words and times. A speaker the diarizer missed gets the
// next free letter no speaker had; any other label, another tenant's note, a line the free plan's preview does
// not show, and a request without the session's CSRF token change nothing. A webhook endpoint
// hears of each correction with the speakers as they are after it.
import t from 'tap'
import { DeciderSpecification } from './support/decider.ts'
import { testService } from './support/service.ts'
import { signedIn } from './support/dashboard.ts'
import { readyNote, transcriptOf, type SegmentSpec } from './support/transcripts.ts'
import { noteTranscriptDecider, evolveNoteTranscript, type TranscriptCommand, type TranscriptEvent } from '../domain/notes/noteTranscript.ts'
import { nextSpeakerLabel } from '../domain/speakers/labels.ts'
import { speakerStats, statsAfterMoves, type Transcript } from '../domain/notes/transcript.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import { FREE_PLAN_PREVIEW } from '../domain/transcripts/preview.ts'
import { WebhookPayload } from '../contract/webhooks.ts'
import { startHttpServer } from './support/httpServer.ts'
import { pollUntil } from './support/pollUntil.ts'

const at = '2026-03-01T10:00:00.000Z'
const later = '2026-03-02T10:00:00.000Z'

t.test('decider: a line goes to a known speaker or to the next free letter, once', async (t) => {
  const spec = DeciderSpecification.for(noteTranscriptDecider, evolveNoteTranscript)
  const segments: Transcript['segments'] = [
    { id: 's0', sequence: 0, startMs: 0, endMs: 2000, speakerLabel: 'A', text: 'Hello.', confidence: 0.9, locale: null, words: null },
    { id: 's1', sequence: 1, startMs: 2000, endMs: 4500, speakerLabel: 'B', text: 'I will send it.', confidence: 0.9, locale: null, words: null },
    { id: 's2', sequence: 2, startMs: 4500, endMs: 6000, speakerLabel: 'B', text: 'Thanks.', confidence: 0.9, locale: null, words: null },
  ]
  const created: NoteEvent = {
    type: 'NoteCreated',
    data: { noteId: 'n1', accountId: 'a1', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'T', language: null, keepAudio: false, upload: null, jobId: null, reservationId: null, at },
  }
  const transcribed: NoteEvent = { type: 'NoteTranscribed', data: { transcript: { language: 'en', languagesDetected: ['en'], durationSeconds: 6, engine: 'x', provider: null, model: null, segments }, at } }
  const ready = [created, transcribed]
  const move = (sequence: number, to: string | null, accountId = 'a1', preview?: { maxSegments: number; maxChars: number }): TranscriptCommand => ({ type: 'ChangeSegmentSpeaker', accountId, sequence, to, ...(preview ? { preview } : {}), now: later })
  const change = (segmentId: string, sequence: number, startMs: number, endMs: number, from: string, to: string) => ({ segmentId, sequence, startMs, endMs, from, to })
  const moved: TranscriptEvent = { type: 'SegmentSpeakersChanged', data: { changes: [change('s1', 1, 2000, 4500, 'B', 'A')], firstLabel: 'A', at: later } }

  spec.given(ready).when(move(1, 'A')).then(t, [moved], 'given B has line 1, when it goes to A, then one event with its times')
  spec.given([...ready, moved]).when(move(1, 'A')).thenNothingHappened(t, 'moving it again to the same speaker is a retry')
  spec.given([...ready, moved]).when(move(1, 'B')).thenMatches(t, [{ type: 'SegmentSpeakersChanged', data: { changes: [{ from: 'A', to: 'B' }] } }], 'the state follows the move')
  spec.given(ready).when(move(0, null)).thenMatches(t, [{ type: 'SegmentSpeakersChanged', data: { changes: [{ from: 'A', to: 'C' }], firstLabel: 'C' } }], 'a new speaker: C, the next free letter; the first line now has C')
  spec.given(ready).when(move(0, 'C')).thenThrows(t, 'invalid_request', /\(A, B\) or to a new speaker/)
  const named: TranscriptEvent = { type: 'SpeakerRenamed', data: { label: 'C', name: 'Carla', previousName: null, sourceKey: null, at: later } }
  const toC: TranscriptEvent = { type: 'SegmentSpeakersChanged', data: { changes: [change('s0', 0, 0, 2000, 'A', 'C')], firstLabel: 'C', at: later } }
  const backToB: TranscriptEvent = { type: 'SegmentSpeakersChanged', data: { changes: [change('s0', 0, 0, 2000, 'C', 'B')], firstLabel: 'B', at: later } }
  spec.given([...ready, toC, named, backToB]).when(move(1, null)).thenMatches(t, [{ type: 'SegmentSpeakersChanged', data: { changes: [{ to: 'D' }] } }], 'C has no line left but keeps its name: the next new speaker is D, not Carla')
  spec.given(ready).when(move(7, 'A')).thenThrows(t, 'not_found', /no line 7/)
  spec.given(ready).when(move(1, 'A', 'a2')).thenThrows(t, 'not_found', /belongs to you/)
  spec.given([created]).when(move(1, 'A')).thenThrows(t, 'no_transcript')
  spec.given(ready).when(move(2, 'A', 'a1', { maxSegments: 2, maxChars: 2000 })).thenThrows(t, 'not_found', /no line 2/) // past the preview: no line the caller can move
  spec.given(ready).when(move(1, 'A', 'a1', { maxSegments: 2, maxChars: 2000 })).thenMatches(t, [{ type: 'SegmentSpeakersChanged', data: { changes: [{ sequence: 1 }] } }], 'one inside the preview moves')

  const merge = (from: string, into: string, accountId = 'a1'): TranscriptCommand => ({ type: 'MergeSpeaker', accountId, from, into, now: later })
  spec
    .given(ready)
    .when(merge('B', 'A'))
    .then(t, [{ type: 'SegmentSpeakersChanged', data: { changes: [change('s1', 1, 2000, 4500, 'B', 'A'), change('s2', 2, 4500, 6000, 'B', 'A')], firstLabel: 'A', at: later } }], 'a merge: every line of B to A, in one event')
  spec.given([...ready, moved]).when(merge('B', 'A')).thenMatches(t, [{ type: 'SegmentSpeakersChanged', data: { changes: [{ sequence: 2 }] } }], 'what B has left')
  spec.given(ready).when(merge('B', 'B')).thenThrows(t, 'invalid_request', /another of this transcript's speakers \(A\)/)
  spec.given(ready).when(merge('B', 'Z')).thenThrows(t, 'invalid_request')
  spec.given(ready).when(merge('Z', 'A')).thenThrows(t, 'not_found', /no speaker "Z"/)
  spec.given(ready).when(merge('B', 'A', 'a2')).thenThrows(t, 'not_found', /belongs to you/)

  const undo = (accountId = 'a1'): TranscriptCommand => ({ type: 'UndoLineSpeakers', accountId, now: later })
  const merged: TranscriptEvent = { type: 'SegmentSpeakersChanged', data: { changes: [change('s1', 1, 2000, 4500, 'B', 'A'), change('s2', 2, 4500, 6000, 'B', 'A')], firstLabel: 'A', at: later } }
  const undone: TranscriptEvent = { type: 'SegmentSpeakersChanged', data: { changes: [change('s1', 1, 2000, 4500, 'A', 'B'), change('s2', 2, 4500, 6000, 'A', 'B')], firstLabel: 'A', at: later } }
  spec.given([...ready, merged]).when(undo()).then(t, [undone], 'given a merge, when undone, then every line goes back to B')
  spec.given([...ready, merged, undone]).when(undo()).then(t, [{ ...merged, data: { ...merged.data } }], 'undoing the undo merges again')
  const movedAgain: TranscriptEvent = { type: 'SegmentSpeakersChanged', data: { changes: [change('s2', 2, 4500, 6000, 'A', 'C')], firstLabel: 'A', at: later } }
  spec.given([...ready, merged, movedAgain]).when(undo()).thenMatches(t, [{ data: { changes: [{ sequence: 2, from: 'C', to: 'A' }] } }], 'only the last change is undone')
  spec.given(ready).when(undo()).thenThrows(t, 'conflict', /nothing|no change/)
  spec.given([...ready, merged, transcribed]).when(undo()).thenThrows(t, 'conflict') // a new transcription leaves nothing to undo
  spec.given([...ready, merged]).when(undo('a2')).thenThrows(t, 'not_found')
})

t.test('the next letter and the stats after a move', async (t) => {
  const labels = (...l: (string | null)[]) => new Set(l)
  t.equal(nextSpeakerLabel(labels('A', 'B')), 'C')
  t.equal(nextSpeakerLabel(labels('B', null)), 'A', 'a gap is filled first')
  t.equal(nextSpeakerLabel(labels(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ')), 'AA', 'after Z comes AA')
  t.equal(nextSpeakerLabel(labels('spk_0', 'spk_1')), 'A', "a published transcript's own labels are no letters")

  // Whatever is moved, the stats equal those counted afresh from the lines.
  const lines = transcriptOf(
    [
      ['A', 0, 1333, 'one'],
      ['B', 1333, 2667, 'two'],
      ['A', 2667, 4001, 'three'],
      ['B', 4001, 5003, 'four'],
    ],
    { language: 'en' },
  ).segments
  let segments = lines
  let stats = speakerStats(segments)
  for (const moves of [[[1, 'A']], [[3, 'C']], [[0, 'C'], [2, 'C']], [[2, 'B']], [[1, 'B'], [3, 'B']]] as const) {
    const changes = moves.map(([sequence, to]) => ({ ...segments.find((s) => s.sequence === sequence)!, from: segments.find((s) => s.sequence === sequence)!.speakerLabel, to }))
    stats = statsAfterMoves(stats, changes)
    segments = segments.map((s) => ({ ...s, speakerLabel: changes.find((c) => c.sequence === s.sequence)?.to ?? s.speakerLabel }))
    t.same(stats, speakerStats(segments), JSON.stringify(moves))
  }
  t.same(
    statsAfterMoves([{ label: 'A', speechSeconds: 2, segmentCount: 1, confidence: 0.8 }, { label: 'B', speechSeconds: 1, segmentCount: 1, confidence: 0.7 }], [{ from: 'B', to: 'A', startMs: 0, endMs: 1000 }]),
    [{ label: 'A', speechSeconds: 3, segmentCount: 2, confidence: 0.8 }],
    'B is gone; A keeps the diarizer’s confidence',
  )
})

const MEETING: SegmentSpec[] = [
  ['A', 0, 6000, 'Good morning, thanks for joining the budget review of the launch.'],
  ['B', 6000, 12000, 'Thanks. The budget for the launch is forty thousand euros.'],
  ['A', 12000, 18000, 'I think we should move the launch to April because the budget is tight.'],
  // Said by A, heard as B (the telephone line of two alike men).
  ['B', 18000, 24000, 'I will send the budget report to the board by Friday.'],
  ['B', 24000, 30000, 'We decided to keep the launch in April then.'],
]

t.test('on the dashboard: the corrected line reaches the transcript, talk time, timeline, exports and analyses', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const { d, accountId } = await signedIn(s, 'pro')
  const stranger = await signedIn(s, 'pro')
  const noteId = await readyNote(s, accountId, { transcript: transcriptOf(MEETING, { language: 'en', words: true }), title: 'Budget review' })
  const transcript = async () => (await d.request('GET', `/app/api/notes/${noteId}/transcript`)).json()
  const before = await transcript()
  const line = before.segments.find((x: { sequence: number }) => x.sequence === 3)
  const assignee = async () => {
    const r = await d.request('POST', `/app/api/notes/${noteId}/analysis`, { body: { templates: ['generic'] } })
    if (r.statusCode !== 200) throw new Error(`analysis: ${r.statusCode} ${r.body}`)
    return (r.json().analyses[0].actionItems as { text: string; assignee: string | null }[]).find((x) => /budget report/.test(x.text))?.assignee
  }
  t.equal(await assignee(), 'Speaker B', 'given: the analysis gives the report to B, as the diarizer heard it')
  const next = async () => {
    const r = await d.request('POST', `/app/api/notes/${noteId}/deliverables`, { body: { kind: 'email', template: 'next_steps', locale: 'en' } })
    if (r.statusCode !== 201 && r.statusCode !== 200) throw new Error(`deliverable: ${r.statusCode} ${r.body}`)
    return r.json().deliverable.content as string
  }
  const minutes = await d.request('POST', `/app/api/notes/${noteId}/analysis`, { body: { templates: ['meeting_minutes'] } })
  t.equal(minutes.statusCode, 200, 'and the minutes a next-steps email is made from, made before the correction')
  t.match(await next(), /Speaker B[^\n]*budget report|budget report[^\n]*Speaker B/, 'the email made now gives the report to B too')

  t.test('refused: no CSRF token, another tenant, an unknown line, a label that is not a speaker', async (t) => {
    const url = `/app/api/notes/${noteId}/segments/3/speaker`
    t.equal((await d.request('PATCH', url, { body: { speakerLabel: 'A' }, csrf: false })).statusCode, 403)
    const foreign = await stranger.d.request('PATCH', url, { body: { speakerLabel: 'A' } })
    t.equal(foreign.statusCode, 404)
    t.equal(foreign.json().error, 'not_found')
    const unknown = await d.request('PATCH', `/app/api/notes/${noteId}/segments/99/speaker`, { body: { speakerLabel: 'A' } })
    t.match([unknown.statusCode, unknown.json().error], [404, 'not_found'])
    for (const body of [{ speakerLabel: 'D' }, { speakerLabel: 'a' }, { speakerLabel: '' }, { speakerLabel: 7 }, { speakerLabel: null }, {}, { newSpeaker: false }, { speakerLabel: 'A', newSpeaker: true }, { speakerLabel: 'A', extra: 1 }]) {
      const r = await d.request('PATCH', url, { body })
      t.match([r.statusCode, r.json().error], [400, 'invalid_request'], JSON.stringify(body))
    }
    for (const sequence of ['-1', '1.5', 'x']) {
      const r = await d.request('PATCH', `/app/api/notes/${noteId}/segments/${sequence}/speaker`, { body: { speakerLabel: 'A' } })
      t.match([r.statusCode, r.json().error], [404, 'not_found'], `line ${sequence}: no such line`)
    }
    t.same(await transcript(), before, 'nothing changed')
  })

  t.test('when the person gives line 3 to A', async (t) => {
    const r = await d.request('PATCH', `/app/api/notes/${noteId}/segments/3/speaker`, { body: { speakerLabel: 'A' } })
    t.equal(r.statusCode, 200, r.body)
    t.match(r.json(), { noteId, speakers: [{ label: 'A', speechSeconds: 18, segmentCount: 3 }, { label: 'B', speechSeconds: 12, segmentCount: 2 }] }, 'the speakers after it: talk time follows')
    const after = await transcript()
    t.same(after.segments[3], { ...line, speakerLabel: 'A', speakerName: null }, 'the line is A’s; id, times, text and words unchanged')
    t.same(after.speakers, r.json().speakers.map(({ evidence: _e, ...x }: { evidence: unknown }) => x), 'the transcript says the same')
  })

  t.test('then the timeline, the exports and a new analysis say A said it', async (t) => {
    const timeline = (await d.request('GET', `/app/api/notes/${noteId}/speakers/timeline`)).json()
    t.same(
      timeline.turns.map((x: { speakerLabel: string; firstSegment: number; lastSegment: number; startMs: number; endMs: number }) => [x.speakerLabel, x.firstSegment, x.lastSegment, x.startMs, x.endMs]),
      [['A', 0, 0, 0, 6000], ['B', 1, 1, 6000, 12000], ['A', 2, 3, 12000, 24000], ['B', 4, 4, 24000, 30000]],
      'A’s turn now runs through line 3',
    )
    const srt = await d.request('GET', `/app/api/notes/${noteId}/transcript/export?format=srt`, { headers: { 'sec-fetch-site': 'same-origin' } })
    t.match(srt.body, /Speaker A: I will send the budget report/)
    t.equal(await assignee(), 'Speaker A', 'an analysis made afterwards gives the report to A')
    const email = await next()
    t.match(email, /Speaker A[^\n]*budget report|budget report[^\n]*Speaker A/, 'an email made afterwards gives the report to A, though its minutes were made before')
    t.notMatch(email, /Speaker B[^\n]*budget report|budget report[^\n]*Speaker B/)
    const note = (await d.request('GET', `/app/api/notes/${noteId}`)).json()
    t.equal(note.transcript.speakerCount, 2)
  })

  t.test('a voice the diarizer missed: the next letter, named like any other', async (t) => {
    const r = await d.request('PATCH', `/app/api/notes/${noteId}/segments/4/speaker`, { body: { newSpeaker: true } })
    t.equal(r.statusCode, 200, r.body)
    t.same(r.json().speakers.map((x: { label: string }) => x.label), ['A', 'B', 'C'])
    t.notOk('diarizationConfidence' in r.json().speakers[2], 'a person heard that voice, not the model: no confidence')
    const named = await d.request('PATCH', `/app/api/notes/${noteId}/speakers/C`, { body: { name: 'Carla' } })
    t.equal(named.statusCode, 200, named.body)
    t.equal((await transcript()).segments[4].speakerName, 'Carla')
    t.equal((await d.request('GET', `/app/api/notes/${noteId}`)).json().transcript.speakerCount, 3)
    // B's last line goes to Carla: B drops out.
    t.match((await d.request('PATCH', `/app/api/notes/${noteId}/segments/1/speaker`, { body: { speakerLabel: 'C' } })).json().speakers, [{ label: 'A' }, { label: 'C', segmentCount: 2 }], 'a speaker with no line left drops out')
    const gone = await d.request('PATCH', `/app/api/notes/${noteId}/segments/0/speaker`, { body: { speakerLabel: 'B' } })
    t.match([gone.statusCode, gone.json().error], [400, 'invalid_request'], 'B has no line left: a line goes to a new speaker instead')
  })

  t.test('two labels of one person: merged, every line at once', async (t) => {
    const url = (label: string) => `/app/api/notes/${noteId}/speakers/${label}/merge`
    t.equal((await d.request('POST', url('C'), { body: { into: 'A' }, csrf: false })).statusCode, 403, 'no CSRF token, no merge')
    t.equal((await stranger.d.request('POST', url('C'), { body: { into: 'A' } })).statusCode, 404, "another tenant's note")
    t.equal((await d.request('POST', url('Q'), { body: { into: 'A' } })).statusCode, 404, 'no speaker Q')
    for (const body of [{ into: 'C' }, { into: 'Q' }, {}, { into: 'A', extra: true }]) t.equal((await d.request('POST', url('C'), { body })).statusCode, 400, JSON.stringify(body))
    const r = await d.request('POST', url('C'), { body: { into: 'A' } })
    t.equal(r.statusCode, 200, r.body)
    t.match(r.json().speakers, [{ label: 'A', segmentCount: 5, speechSeconds: 30 }])
    t.equal(r.json().speakers.length, 1)
    t.same((await transcript()).segments.map((x: { speakerLabel: string }) => x.speakerLabel), ['A', 'A', 'A', 'A', 'A'])
    const timeline = (await d.request('GET', `/app/api/notes/${noteId}/speakers/timeline`)).json()
    t.match(timeline.turns, [{ speakerLabel: 'A', firstSegment: 0, lastSegment: 4, segmentCount: 5 }], 'one turn')
    t.equal(timeline.turns.length, 1)
  })

  t.test('a merge made by mistake is undone in one step, and the undo redone', async (t) => {
    const undo = () => d.request('POST', `/app/api/notes/${noteId}/speakers/undo`, { body: {} })
    t.equal((await d.request('POST', `/app/api/notes/${noteId}/speakers/undo`, { body: {}, csrf: false })).statusCode, 403)
    t.equal((await stranger.d.request('POST', `/app/api/notes/${noteId}/speakers/undo`, { body: {} })).statusCode, 404)
    const r = await undo()
    t.equal(r.statusCode, 200, r.body)
    t.match(r.json().speakers, [{ label: 'A', segmentCount: 3 }, { label: 'C', name: 'Carla', segmentCount: 2 }], 'Carla has her lines and her name back')
    t.same((await transcript()).segments.map((x: { speakerLabel: string }) => x.speakerLabel), ['A', 'C', 'A', 'A', 'C'])
    t.match((await undo()).json().speakers, [{ label: 'A', segmentCount: 5 }], 'undoing the undo merges again')
  })
})

t.test('the free plan moves only lines its preview shows whole', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const { d, accountId } = await signedIn(s, 'free')
  const many: SegmentSpec[] = Array.from({ length: FREE_PLAN_PREVIEW.maxSegments + 3 }, (_, i) => [i % 2 ? 'B' : 'A', i * 1000, i * 1000 + 900, `Line number ${i}.`])
  const noteId = await readyNote(s, accountId, { transcript: transcriptOf(many, { language: 'en' }) })
  const past = await d.request('PATCH', `/app/api/notes/${noteId}/segments/${FREE_PLAN_PREVIEW.maxSegments + 1}/speaker`, { body: { speakerLabel: 'A' } })
  t.match([past.statusCode, past.json().error], [404, 'not_found'], 'a line past the preview answers as no line, so it tells nothing')
  const inside = await d.request('PATCH', `/app/api/notes/${noteId}/segments/1/speaker`, { body: { speakerLabel: 'A' } })
  t.equal(inside.statusCode, 200)
  t.equal((await d.request('GET', `/app/api/notes/${noteId}/transcript`)).json().segments[1].speakerLabel, 'A')
})

t.test('a webhook endpoint hears of a correction, with the speakers after it', async (t) => {
  const hooks: WebhookPayload[] = []
  const web = await startHttpServer({
    '/hook': (_req, body) => {
      hooks.push(WebhookPayload.parse(JSON.parse(body.toString('utf8'))))
      return { status: 200, body: 'ok' }
    },
  })
  t.teardown(web.close)
  const s = await testService({ workers: true, env: { WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '20' } })
  t.teardown(s.close)
  const { d, accountId } = await signedIn(s, 'power') // webhooks come with the power plan
  const hook = await d.request('POST', '/app/api/webhooks', { body: { url: web.url('/hook'), events: ['note.speakers_updated'] } })
  t.equal(hook.statusCode, 201, hook.body)
  const noteId = await readyNote(s, accountId, { transcript: transcriptOf(MEETING, { language: 'en' }) })
  t.equal((await d.request('PATCH', `/app/api/notes/${noteId}/segments/3/speaker`, { body: { speakerLabel: 'A' } })).statusCode, 200)
  const moved = await pollUntil('the webhook of the move', () => hooks.find((h) => h.data.noteId === noteId), 20_000)
  t.match(moved, { type: 'note.speakers_updated', data: { speakers: [{ label: 'A', segmentCount: 3 }, { label: 'B', segmentCount: 2 }] } })
  t.equal((await d.request('POST', `/app/api/notes/${noteId}/speakers/B/merge`, { body: { into: 'A' } })).statusCode, 200)
  const merged = await pollUntil('the webhook of the merge', () => hooks.filter((h) => h.data.noteId === noteId)[1], 20_000)
  t.match(merged.data.speakers, [{ label: 'A', segmentCount: 5 }])
  t.equal(merged.data.speakers.length, 1, 'B is gone')
})

t.test('over REST with an API key: the same operations, free, answering the speakers (never the lines, whose read is charged)', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const other = await s.account('pro')
  const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf(MEETING, { language: 'en' }) })
  const call = (method: 'PATCH' | 'POST', url: string, body: unknown, headers = a.headers) =>
    s.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
  const left = async () => (await s.services.status.status({ accountId: a.accountId })).credits.left
  const before = await left()
  const moved = await call('PATCH', `/v1/notes/${noteId}/segments/3/speaker`, { speakerLabel: 'A' })
  t.equal(moved.statusCode, 200, moved.body)
  t.same(Object.keys(moved.json()).sort(), ['noteId', 'speakers'], 'a SpeakerList, no segment text')
  t.equal((await call('PATCH', `/v1/notes/${noteId}/segments/3/speaker`, { speakerLabel: 'A' }, other.headers)).statusCode, 404, "another tenant's note is no note")
  t.equal((await call('POST', `/v1/notes/${noteId}/speakers/B/merge`, { into: 'A' }, other.headers)).statusCode, 404)
  const merged = await call('POST', `/v1/notes/${noteId}/speakers/B/merge`, { into: 'A' })
  t.equal(merged.statusCode, 200, merged.body)
  t.match(merged.json().speakers, [{ label: 'A', segmentCount: 5 }])
  const none = await s.inject({ method: 'POST', url: `/v1/notes/${await readyNote(s, a.accountId, { transcript: transcriptOf(MEETING, { language: 'en' }) })}/speakers/undo`, headers: a.headers })
  t.match([none.statusCode, none.json().error], [409, 'conflict'], 'nothing to undo on a note nobody corrected')
  t.equal(await left(), before, 'free')
  const timeline = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers/timeline`, headers: a.headers })).json()
  t.equal(timeline.turns.length, 1, 'the timeline follows')
  const openapi = (await s.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  t.ok(openapi.paths['/v1/notes/{id}/segments/{sequence}/speaker']?.patch, 'documented in the OpenAPI document')
  t.ok(openapi.paths['/v1/notes/{id}/speakers/{label}/merge']?.post)
})
