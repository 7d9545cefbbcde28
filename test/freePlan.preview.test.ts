// The free plan's transcript preview holds on every way out (issue 11, item 6): get_note's full
// text, the segments, a translation, the echo of replace_in_transcript and the dashboard show
// the same first segments get_transcript_segments shows, and never a word past them. Over the
// MCP SDK client against the listening service, and the dashboard's JSON API as its page calls it.
import t from 'tap'
import { Readable } from 'node:stream'
import { mcpTestService, structured, toolErrorBody } from './support/mcp.ts'
import { wavBytes } from './support/media.ts'
import { readyNote, transcriptOf, type SegmentSpec } from './support/transcripts.ts'
import { DashboardClient, accountWithPerson } from './support/dashboard.ts'
import { FREE_PLAN_PREVIEW, FREE_PLAN_PREVIEW_RULE } from '../domain/transcripts/preview.ts'

const s = await mcpTestService()
t.teardown(s.close)

/** `n` segments of 30 characters; the words after the preview are marked SECRET<i>. */
const many = (n: number): SegmentSpec[] => Array.from({ length: n }, (_, i) => [i % 2 ? 'B' : 'A', i * 2000, i * 2000 + 1900, `Segment ${String(i).padStart(2, '0')} ${i >= 20 ? `SECRET${i}` : 'open'} `.padEnd(30, 'x')])
const hidden = /SECRET/

t.test('a free account reads the same preview through every tool and page', async (t) => {
  const free = await accountWithPerson(s, 'free')
  const noteId = await readyNote(s, free.accountId, { transcript: transcriptOf(many(30)) })
  const c = await s.connect(s.mcpUrl, free.headers)

  const segments = structured(await c.callTool({ name: 'get_transcript_segments', arguments: { noteId } }))
  t.match(segments, { truncated: true, truncation: { shownSegments: FREE_PLAN_PREVIEW.maxSegments, totalSegments: 30, rule: FREE_PLAN_PREVIEW_RULE } })

  const note = structured(await c.callTool({ name: 'get_note', arguments: { noteId } }))
  t.notMatch(note.transcript.fullText, hidden, 'get_note does not give away what get_transcript_segments holds back')
  t.equal(note.transcript.fullText, segments.fullText, 'the same text as the segments')
  t.match(note.transcript, { truncated: true, truncation: segments.truncation })

  // A find-and-replace that touches every segment echoes only the preview's segments.
  const replaced = structured(await c.callTool({ name: 'replace_in_transcript', arguments: { noteId, find: 'x', replace: 'y', wholeWord: false } }))
  t.equal(replaced.occurrences > 0, true)
  t.equal(replaced.truncated, true)
  t.ok(replaced.changedSegments.length > 0 && replaced.changedSegments.every((x: { sequence: number }) => x.sequence < FREE_PLAN_PREVIEW.maxSegments))
  t.notMatch(JSON.stringify(replaced), hidden)

  // The dashboard shows the same preview.
  const d = new DashboardClient(s)
  t.equal((await d.signIn(free.email)).statusCode, 201)
  const page = await d.request('GET', `/app/api/notes/${noteId}`)
  t.equal(page.statusCode, 200)
  t.notMatch(page.json().transcript.fullText, hidden)
  t.equal(page.json().transcript.truncated, true)
  const transcript = await d.request('GET', `/app/api/notes/${noteId}/transcript`)
  t.equal(transcript.statusCode, 200)
  t.equal(transcript.json().segments.length, FREE_PLAN_PREVIEW.maxSegments)
  t.notMatch(transcript.body, hidden)
  t.match(transcript.json(), { truncated: true, truncation: { shownSegments: 20, totalSegments: 30 } })

  // Nothing in the whole conversation carried the hidden part.
  t.notMatch(JSON.stringify([segments, note, replaced]), hidden)
})

t.test('a paid plan reads everything everywhere, without the flags', async (t) => {
  const personal = await accountWithPerson(s, 'personal')
  const noteId = await readyNote(s, personal.accountId, { transcript: transcriptOf(many(30)) })
  const c = await s.connect(s.mcpUrl, personal.headers)
  const note = structured(await c.callTool({ name: 'get_note', arguments: { noteId } }))
  t.match(note.transcript.fullText, /SECRET29/)
  t.notOk('truncated' in note.transcript)
  const replaced = structured(await c.callTool({ name: 'replace_in_transcript', arguments: { noteId, find: 'x', replace: 'y', wholeWord: false } }))
  t.equal(replaced.changedSegments.length, 30)
  t.notOk('truncated' in replaced)
  const d = new DashboardClient(s)
  await d.signIn(personal.email)
  t.equal((await d.request('GET', `/app/api/notes/${noteId}/transcript`)).json().segments.length, 30)
})

t.test('no answer tells what lies past the preview: search, replace counts, questions, name evidence (issue 26, item 5)', async (t) => {
  const free = await accountWithPerson(s, 'free')
  const noteId = await readyNote(s, free.accountId, { transcript: transcriptOf(many(30)) })
  const c = await s.connect(s.mcpUrl, free.headers)
  const search = async (q: string) => structured(await c.callTool({ name: 'search_notes', arguments: { q } })).notes.map((n: { id: string }) => n.id)
  t.same(await search('open'), [noteId], 'a word inside the preview finds the note')
  t.same(await search('SECRET25'), [], 'a word only past the preview finds nothing')
  const d = new DashboardClient(s)
  await d.signIn(free.email)
  t.same((await d.request('GET', '/app/api/notes?q=SECRET25')).json().notes, [], 'nor on the dashboard')

  // The same answer whether `find` occurs past the preview or nowhere at all.
  const replace = async (find: string, by = `${find}!`) => structured(await c.callTool({ name: 'replace_in_transcript', arguments: { noteId, find, replace: by, wholeWord: false } }))
  const hidden = await replace('SECRET25')
  t.same(hidden, await replace('NOWHERE-AT-ALL'), 'a hidden word and an absent one answer alike')
  t.match(hidden, { occurrences: 0, changedSegments: [], truncated: true })
  const edited = await replace('Segment', 'Part')
  t.equal(edited.occurrences, FREE_PLAN_PREVIEW.maxSegments, `occurrences are counted in the preview only: ${JSON.stringify(edited).slice(0, 300)}`)

  const asked = structured(await c.callTool({ name: 'ask_note', arguments: { noteId, question: 'What does SECRET25 say?' } }))
  t.notMatch(asked.answer, /SECRET/, 'the answer quotes no segment past the preview')
  const transcript = structured(await c.callTool({ name: 'get_transcript_segments', arguments: { noteId } }))
  const visibleIds = new Set(transcript.segments.map((x: { id: string }) => x.id))
  t.ok(asked.citedSegments.every((id: string) => visibleIds.has(id)), 'it cites preview segments only')

  // A speaker introduces himself past the preview: the name suggestion may not quote it.
  const segs = many(30)
  segs[25] = ['A', 50_000, 51_900, 'Hello, my name is Zorbak Quill.']
  const named = await readyNote(s, free.accountId, { transcript: transcriptOf(segs) })
  const suggested = structured(await c.callTool({ name: 'suggest_speaker_names', arguments: { noteId: named } }))
  t.notMatch(JSON.stringify(suggested.speakers.map((x: { evidence: unknown }) => x.evidence)), /Zorbak|SECRET/, 'no evidence quotes a segment past the preview')

  // Nor its audio: a clip ends where the preview's last segment ends (19 * 2000 + 1900 ms).
  const key = `uploads/${named}-audio`
  await s.services.blobs.put(key, Readable.from(wavBytes(60)), { contentType: 'audio/wav', maxBytes: 10_000_000 })
  const withAudio = await readyNote(s, free.accountId, { transcript: transcriptOf(many(30)), audioBlobKey: key })
  const clip = (startMs: number, endMs: number) => c.callTool({ name: 'extract_clip', arguments: { noteId: withAudio, startMs, endMs } })
  t.match(toolErrorBody(await clip(45_000, 47_000)), { error: 'invalid_request', maxEndMs: 39_900 })
  t.match(toolErrorBody(await clip(38_000, 41_000)), { error: 'invalid_request' })
  t.match(structured(await clip(1000, 3000)), { startMs: 1000, endMs: 3000 }, 'inside the preview a clip is cut as always')
})
