// Issue 27, item 4: a speaker's name reaches every output. Given a note whose analyses were made
// while its speakers had no names, when the user renames speaker A (PATCH speakers/A), then every
// output made or read afterwards says "Alice J." and none says "Speaker A": analyses of every
// template (debate sections carry the name), the outline, note and library answers, the three
// deliverable kinds (their files too, even when their basis analysis was made before the rename),
// the five export formats, the MCP tools (the translation too), the webhook and the dashboard's JSON. A suggested name
// above the threshold is used and marked `suggested`; accepting it confirms it. Another tenant's
// identical note never shows the name, and a hostile name is escaped where the formats escape.
import t from 'tap'
import type * as Tap from 'tap'
import JSZip from 'jszip'
import { mcpTestService, structured } from './support/mcp.ts'
import { readyNote, transcriptOf, type SegmentSpec } from './support/transcripts.ts'
import { startHttpServer } from './support/httpServer.ts'
import { pollUntil } from './support/pollUntil.ts'
import { DashboardClient, accountWithPerson } from './support/dashboard.ts'
import { WebhookPayload } from '../contract/webhooks.ts'
import { viewSpeaker, viewSpeakers, emptySpeaker } from '../domain/speakers/speakers.ts'

const json = { 'content-type': 'application/json' }
const SPEC_TEMPLATES = ['generic', 'sales', 'legal', 'medical', 'journalism', 'education', 'customer_success', 'meeting_minutes', 'consulting', 'coaching', 'therapy', 'podcast', 'university_class', 'debate']

const MEETING: SegmentSpec[] = [
  ['A', 0, 6000, 'Good morning, thanks for joining the budget review of the launch.'],
  ['B', 6000, 12000, 'Thanks. My name is Bob Stone, and the budget for the launch is forty thousand euros.'],
  ['A', 12000, 18000, 'I think we should move the launch to April because the budget is tight.'],
  ['B', 18000, 24000, 'I disagree, the campaign needs the March date to reach the trade fair.'],
  ['A', 24000, 30000, 'I will send the budget report to the board by Friday.'],
  ['B', 30000, 36000, 'We decided to keep the launch in April then, and the fair can wait.'],
]

/** Quoted-printable (the .eml text part) back to text. */
const unQP = (s: string) =>
  Buffer.from(
    s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
    'latin1',
  ).toString('utf8')

/** The text of every XML part of an Office file (document body, slides). */
async function officeText(bytes: Buffer): Promise<string> {
  const zip = await JSZip.loadAsync(bytes)
  const parts = Object.keys(zip.files).filter((n) => /^(word\/document|ppt\/slides\/slide\d+)\.xml$/.test(n))
  return (await Promise.all(parts.map((n) => zip.file(n)!.async('string')))).join('\n')
}

t.test('the name in use and where it comes from (one rule for every output)', async (t) => {
  const voice = { profileId: 'p1', profileName: 'Alice Jones', similarity: 0.86 }
  t.match(viewSpeaker({ ...emptySpeaker('A'), confirmedName: 'Alice J.', voice }), { name: 'Alice J.', nameStatus: 'confirmed', status: 'confirmed' })
  t.match(viewSpeaker({ ...emptySpeaker('A'), voice }), { name: 'Alice Jones', nameStatus: 'suggested', status: 'voice-matched' }, 'a voice match above the threshold: in use, as a suggestion')
  t.match(viewSpeaker({ ...emptySpeaker('A'), inferred: { name: 'Alice Jones', confidence: 0.6, evidence: [] }, voice: { ...voice, similarity: 0.6 } }), { name: 'Alice Jones', status: 'voice-matched' }, 'content and voice agreeing pass together')
  t.match(viewSpeaker({ ...emptySpeaker('A'), inferred: { name: 'Bob', confidence: 0.9, evidence: [] } }), { name: 'Bob', nameStatus: 'suggested', status: 'suggested' })
  t.match(viewSpeaker({ ...emptySpeaker('A'), inferred: { name: 'Bob', confidence: 0.5, evidence: [] } }), { name: null, nameStatus: null, status: 'none', suggestedName: 'Bob' }, 'below the threshold: shown as a suggestion, never used')
  const [a, b] = viewSpeakers([{ ...emptySpeaker('A'), voice }, { ...emptySpeaker('B'), voice: { ...voice, similarity: 0.9 } }])
  t.match([a, b], [{ name: null, status: 'none', suggestedName: 'Alice Jones' }, { name: 'Alice Jones', status: 'voice-matched' }], 'one person, one speaker')
})

t.test('a renamed speaker reaches every output', async (t) => {
  const hooks: { type: string; data: Record<string, any> }[] = []
  const web = await startHttpServer({
    '/hook': (_req, body) => {
      hooks.push(WebhookPayload.parse(JSON.parse(body.toString('utf8'))))
      return { status: 200, body: 'ok' }
    },
  })
  t.teardown(web.close)
  const s = await mcpTestService({ workers: true, env: { WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '20', TRANSLATION_ENGINE: 'apertium', TRANSLATION_POLL_MS: '50' } })
  t.teardown(s.close)
  const a = await accountWithPerson(s, 'power')
  const other = await s.account('power')
  const rest = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, headers = a.headers) =>
    s.inject({ method, url, headers: { ...headers, ...(body ? json : {}) }, ...(body ? { payload: JSON.stringify(body) } : {}) })
  const ok = async (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, headers = a.headers) => {
    const r = await rest(method, url, body, headers)
    if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`)
    return r
  }
  const analyse = async (noteId: string, templates: string[], headers = a.headers) => {
    const out: Record<string, any> = {}
    for (let i = 0; i < templates.length; i += 8) {
      for (const x of (await ok('POST', `/v1/notes/${noteId}/analysis`, { templates: templates.slice(i, i + 8) }, headers)).json().analyses) out[x.template] = x
    }
    return out
  }
  const assigneeOfReport = (analysis: any) => (analysis.actionItems as { text: string; assignee: string }[]).find((x) => /budget report/.test(x.text))?.assignee
  const sectionSpeakers = (debate: any) => new Set(Object.values(debate.sections as Record<string, { speaker: string | null }[]>).flat().map((x) => x.speaker))

  const hook = (await ok('POST', '/v1/webhooks', { url: web.url('/hook') })).json()
  t.same(hook.events, ['note.ready', 'note.failed', 'note.speakers_updated'], 'every event type by default, the speaker updates too')
  const noteId = await readyNote(s, a.accountId, { title: 'Budget review', transcript: transcriptOf(MEETING, { language: 'en' }) })
  const twin = await readyNote(s, other.accountId, { title: 'Budget review', transcript: transcriptOf(MEETING, { language: 'en' }) })

  t.test('given analyses made while nobody was named: they say "Speaker A" and "A"', async (t) => {
    const before = await analyse(noteId, ['generic', 'debate', 'meeting_minutes'])
    t.equal(assigneeOfReport(before.generic), 'Speaker A', 'the generic template names who commits')
    t.ok(sectionSpeakers(before.debate).has('A'), 'debate sections carry the letter')
    const ready = await pollUntil('the note.ready webhook', () => hooks.find((h) => h.type === 'note.ready' && h.data.noteId === noteId), 20_000)
    t.match(ready.data.speakers, [{ label: 'A', name: null, nameStatus: null }, { label: 'B', name: null }], 'note.ready carries the speakers')
  })

  t.test('when speaker A is renamed', async (t) => {
    const r = await ok('PATCH', `/v1/notes/${noteId}/speakers/A`, { name: 'Alice J.' })
    t.match(r.json().speakers[0], { label: 'A', name: 'Alice J.', nameStatus: 'confirmed' })
    t.equal((await rest('PATCH', `/v1/notes/${noteId}/speakers/A`, { name: 'Mallory' }, other.headers)).statusCode, 404, 'another tenant cannot rename it')
  })

  const says = (t: Tap.Test, what: string, text: string) => {
    t.match(text, /Alice J\./, `${what} names Alice J.`)
    t.notMatch(text, /Speaker A\b/, `${what} never says Speaker A`)
  }

  t.test('then the three deliverable kinds, content and file, use the name, though their basis analysis (meeting_minutes) was made before the rename', async (t) => {
    const files: Record<string, string> = {}
    for (const [kind, template] of [['email', 'follow_up'], ['document', 'meeting_recap'], ['slides', 'kickoff']] as const) {
      const d = (await ok('POST', `/v1/notes/${noteId}/deliverables`, { kind, template, locale: 'en' })).json().deliverable
      says(t, `the ${kind} content`, d.content)
      const f = await ok('GET', new URL(d.downloadUrl).pathname)
      files[kind] = kind === 'email' ? unQP(f.rawPayload.toString('utf8')) : await officeText(f.rawPayload)
      says(t, `the .${kind === 'email' ? 'eml' : kind === 'document' ? 'docx' : 'pptx'} file`, files[kind]!)
    }
    t.match(files.document, /Participants: Alice J\., Bob Stone|Participants: Alice J\., Speaker B/, 'Participants: the name, then the other speaker')
  })

  t.test('then regenerated analyses of every template use the name; debate sections carry it', async (t) => {
    const after = await analyse(noteId, SPEC_TEMPLATES)
    for (const template of SPEC_TEMPLATES) t.notMatch(JSON.stringify(after[template]), /Speaker A\b|"speaker":"A"/, `${template}: no "Speaker A", no bare letter for a named speaker`)
    says(t, 'the generic analysis', JSON.stringify(after.generic))
    t.equal(assigneeOfReport(after.generic), 'Alice J.')
    says(t, 'the debate analysis', JSON.stringify(after.debate))
    t.ok(sectionSpeakers(after.debate).has('Alice J.'), 'debate sections: the name')
    t.ok(sectionSpeakers(after.debate).has('B'), 'debate sections: the letter of the unnamed speaker (spec: name or diarization letter)')
    t.match(after.debate.mindmap, /Alice J\.: /, 'the debate mind map')
    const outline = (await ok('GET', `/v1/notes/${noteId}/outline?generate=1`)).json()
    t.ok(outline.generated)
    t.notMatch(JSON.stringify(outline), /Speaker A\b/, 'the outline (its headlines name no speaker)')
  })

  t.test('then note and library answers say who said it by name', async (t) => {
    const question = 'When will the budget report be sent to the board?'
    says(t, 'the note answer', (await ok('POST', `/v1/notes/${noteId}/ask`, { question })).json().answer)
    says(t, 'the library answer', (await ok('POST', '/v1/ask', { question })).json().answer)
  })

  t.test('then the five export formats use the name', async (t) => {
    for (const format of ['json', 'txt', 'srt', 'vtt', 'md']) says(t, `the ${format} export`, (await ok('GET', `/v1/notes/${noteId}/transcript?format=${format}`)).body)
    t.match((await ok('GET', `/v1/notes/${noteId}/transcript?format=vtt`)).body, /<v Alice J\.>I will send the budget report/)
  })

  t.test('then the MCP tools use the name', async (t) => {
    const c = await s.connect(`${s.base}/mcp/stream`, a.headers)
    const call = async (name: string, args: Record<string, unknown>) => JSON.stringify(structured(await c.callTool({ name, arguments: args })))
    says(t, 'get_transcript_segments', await call('get_transcript_segments', { noteId }))
    says(t, 'get_speaker_timeline', await call('get_speaker_timeline', { noteId }))
    says(t, 'ask_note on the note', await call('ask_note', { noteId, question: 'Who sends the budget report to the board?' }))
    says(t, 'ask_note on the library', await call('ask_note', { question: 'Who sends the budget report to the board?' }))
    says(t, 'generate_ai_notes', await call('generate_ai_notes', { noteId, template: 'debate' }))
    says(t, 'get_note', await call('get_note', { noteId }))
    t.equal((await ok('POST', `/v1/notes/${noteId}/transcript/translation`, { language: 'es' })).statusCode, 202)
    const translated = await pollUntil('the translation', async () => {
      const x = structured(await c.callTool({ name: 'get_transcript_translation', arguments: { noteId, language: 'es' } }))
      return x.status === 'ready' ? x : null
    }, 30_000)
    t.match(translated.segments[4], { speakerLabel: 'A', speakerName: 'Alice J.', text: String }, 'get_transcript_translation')
    says(t, 'get_transcript_translation', JSON.stringify(translated))
  })

  t.test('then a webhook tells the endpoint, with the speakers as named', async (t) => {
    const update = await pollUntil('the note.speakers_updated webhook', () => hooks.find((h) => h.type === 'note.speakers_updated' && h.data.noteId === noteId), 20_000)
    t.match(update.data, { status: 'ready', title: 'Budget review', speakers: [{ label: 'A', name: 'Alice J.', nameStatus: 'confirmed' }, { label: 'B', name: null }] })
  })

  t.test('then the dashboard shows the names with their status; a suggestion is marked and accepted there', async (t) => {
    const d = new DashboardClient(s)
    t.equal((await d.signIn(a.email)).statusCode, 201)
    const speakers = (await d.request('GET', `/app/api/notes/${noteId}/speakers`)).json().speakers
    t.match(speakers, [{ label: 'A', name: 'Alice J.', nameStatus: 'confirmed' }, { label: 'B', name: null, nameStatus: null }])
    const suggested = await d.request('POST', `/app/api/notes/${noteId}/speakers/suggest`)
    t.equal(suggested.statusCode, 200)
    const bob = suggested.json().speakers[1]
    t.match(bob, { label: 'B', name: 'Bob Stone', nameStatus: 'suggested', suggestedName: 'Bob Stone', suggestedNameConfidence: Number })
    t.ok(bob.suggestedNameConfidence >= 0.8, 'in use from the threshold on')
    t.match(suggested.json().speakers[0], { name: 'Alice J.', nameStatus: 'confirmed' }, 'a suggestion never overwrites a name the user gave')
    t.match((await d.request('GET', `/app/api/notes/${noteId}/transcript`)).json().speakers[1], { name: 'Bob Stone', nameStatus: 'suggested', suggestedName: 'Bob Stone' }, 'the note page’s transcript says it is a suggestion')
    t.match((await ok('GET', `/v1/notes/${noteId}/transcript?format=txt`)).body, /^Bob Stone: /m, 'a suggestion above the threshold is the name in use')
    const accepted = await d.request('PATCH', `/app/api/notes/${noteId}/speakers/B`, { body: { name: bob.suggestedName } })
    t.equal(accepted.statusCode, 200)
    t.match(accepted.json().speakers[1], { name: 'Bob Stone', nameStatus: 'confirmed' }, 'accepting = PATCH with the suggested name')
    t.match((await d.request('GET', `/app/api/notes/${noteId}/speakers/timeline`)).json().turns[0], { speakerLabel: 'A', speakerName: 'Alice J.' })
    t.equal((await d.request('GET', `/app/api/notes/${twin}/speakers`)).statusCode, 404, "another tenant's note is not found")
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) statuses.push((await d.request('POST', `/app/api/notes/${noteId}/speakers/suggest`)).statusCode)
    t.same(statuses, [...Array(9).fill(200), 429], 'suggest: 10 per hour on the dashboard too (one was used above)')
  })

  t.test("another tenant's identical note never shows the name", async (t) => {
    const txt = (await ok('GET', `/v1/notes/${twin}/transcript?format=txt`, undefined, other.headers)).body
    t.match(txt, /^Speaker A: /m)
    t.match(txt, /^Speaker B: /m)
    t.notMatch(txt, /Alice/)
    const analysis = await analyse(twin, ['generic', 'debate'], other.headers)
    t.notMatch(JSON.stringify(analysis), /Alice|"speaker":"Bob Stone"/)
    t.equal(assigneeOfReport(analysis.generic), 'Speaker A')
    const answer = (await ok('POST', '/v1/ask', { question: 'Who sends the budget report to the board?' }, other.headers)).json()
    t.notMatch(answer.answer, /Alice|— Bob Stone/)
    t.same(answer.citedNotes.map((n: { noteId: string }) => n.noteId), [twin], 'only its own notes are quoted')
  })

  t.test('a name with markup is escaped where the formats escape', async (t) => {
    await ok('PATCH', `/v1/notes/${noteId}/speakers/A`, { name: '<b>Alice</b> & Co' })
    t.match((await ok('GET', `/v1/notes/${noteId}/transcript?format=vtt`)).body, /<v &lt;b&gt;Alice&lt;\/b&gt; &amp; Co>/, 'vtt')
    t.match((await ok('GET', `/v1/notes/${noteId}/transcript?format=json`)).json().speakers[0], { name: '<b>Alice</b> & Co' }, 'json carries it as data')
    const d = (await ok('POST', `/v1/notes/${noteId}/deliverables`, { kind: 'document', template: 'meeting_recap', locale: 'en' })).json().deliverable
    const xml = await officeText((await ok('GET', new URL(d.downloadUrl).pathname)).rawPayload)
    t.match(xml, /Participants: &lt;b&gt;Alice&lt;\/b&gt; &amp; Co, Bob Stone/, 'docx: text, not markup')
    const e = (await ok('POST', `/v1/notes/${noteId}/deliverables`, { kind: 'email', template: 'follow_up', locale: 'en' })).json().deliverable
    const eml = unQP((await ok('GET', new URL(e.downloadUrl).pathname)).rawPayload.toString('utf8'))
    const html = eml.slice(eml.indexOf('Content-Type: text/html'))
    t.match(html, /&lt;b&gt;Alice&lt;\/b&gt; &amp;(amp;)? Co/, 'eml: the HTML part shows it as text')
    t.notMatch(html, /<b>Alice/, 'eml: never as markup')
  })
})
