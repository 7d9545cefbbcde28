// Deciders of the language features, given/when/then: analyses and outline (stream
// analysis-<noteId>), ask sessions (ask-<sessionId>), deliverables (deliverable-<id>), on the
// shared DeciderSpecification (test/support/decider.ts).
import t from 'tap'
import { analysisDecider, outlineProblems, type AnalysisCommand } from '../domain/analysis/analysis.ts'
import { askDecider, type AskCommand, type AskEvent } from '../domain/ask/session.ts'
import { deliverableDecider, deliverableMarkdown, type DeliverableCommand } from '../domain/deliverables/deliverable.ts'
import { fold } from '../domain/decider.ts'
import { DeciderSpecification } from './support/decider.ts'
import type { AnalysisDraft } from '../domain/language/content.ts'

const draft: AnalysisDraft = {
  summary: 's',
  keyPoints: ['k'],
  actionItems: [],
  decisions: [],
  questions: [],
  topics: [],
  anchors: { keyPoints: [0], actionItems: [], decisions: [], questions: [] },
  sections: null,
  mindmap: null,
}
const gen = { engine: 'local', model: 'local-extractive', version: '1.0.0' }
const now = '2026-11-01T10:00:00.000Z'

const analysis = DeciderSpecification.for(analysisDecider)
const ask = DeciderSpecification.for(askDecider)
const deliverable = DeciderSpecification.for(deliverableDecider)

t.test('analyses: every generation is an event with template, engine, model, version and the speaker names it was made with; failures too', async (t) => {
  const record = analysis.given([]).when({
    type: 'RecordAnalyses',
    noteId: 'n',
    accountId: 'a',
    now,
    speakers: { A: 'Alice J.' },
    results: [
      { ok: true, template: 'generic', analysis: draft, ...gen, chargeId: 'c1' },
      { ok: false, template: 'sales', error: 'llm_invalid_json', reason: 'bad', ...gen, chargeId: 'c2' },
    ],
  })
  const events = record.events()
  record.thenMatches(t, [
    { type: 'AnalysisGenerated', data: { template: 'generic', engine: 'local', model: 'local-extractive', version: '1.0.0', chargeId: 'c1', analysis: draft, speakers: { A: 'Alice J.' }, at: now } },
    { type: 'AnalysisFailed', data: { template: 'sales', error: 'llm_invalid_json', reason: 'bad', chargeId: 'c2' } },
  ])
  t.test('then regenerating adds a generation; the same charge again adds nothing', async (t) => {
    const again = analysis.given(events).when({ type: 'RecordAnalyses', noteId: 'n', accountId: 'a', now, speakers: {}, results: [{ ok: true, template: 'generic', analysis: draft, ...gen, chargeId: 'c3' }, { ok: true, template: 'generic', analysis: draft, ...gen, chargeId: 'c1' }] })
    again.thenMatches(t, [{ type: 'AnalysisGenerated', data: { chargeId: 'c3' } }])
    t.equal(analysis.given([...events, ...again.events()]).state().generations.generic, 2)
  })
  t.test("then another account cannot record on this note's stream", async (t) => {
    analysis.given(events).when({ type: 'RecordAnalyses', noteId: 'n', accountId: 'other', now, speakers: {}, results: [] }).thenThrows(t, 'not_found')
  })
})

t.test('outline: recorded once; a second one (a concurrent generation) records nothing; failures set only the attempt', async (t) => {
  const chapters = [
    { startMs: 0, endMs: 4000, headline: 'One' },
    { startMs: 4000, endMs: 9000, headline: 'Two' },
  ]
  const outline = (chargeId: string): AnalysisCommand => ({ type: 'RecordOutline', noteId: 'n', accountId: 'a', chapters, durationMs: 9000, ...gen, chargeId, now })
  const first = analysis.given([]).when(outline('c1'))
  first.thenMatches(t, [{ type: 'OutlineGenerated', data: { chapters, durationMs: 9000, chargeId: 'c1' } }])
  analysis.given(first.events()).when(outline('c2')).thenNothingHappened(t, 'a second outline records nothing')
  const failed = analysis.given([]).when({ type: 'RecordOutlineFailure', noteId: 'n', accountId: 'a', reason: 'timeout', ...gen, chargeId: 'c3', now })
  failed.thenMatches(t, [{ type: 'OutlineFailed' }])
  t.match(analysis.given(failed.events()).state(), { outline: null, outlineAttemptedAt: now })
  analysis
    .given([])
    .when({ type: 'RecordOutline', noteId: 'n', accountId: 'a', chapters: [{ startMs: 0, endMs: 5000, headline: 'x' }, { startMs: 4000, endMs: 9000, headline: 'y' }], durationMs: 9000, ...gen, chargeId: 'c4', now })
    .thenThrows(t, 'llm_invalid_json')
})

t.test('outline invariants', async (t) => {
  t.same(outlineProblems([{ startMs: 0, endMs: 10, headline: 'a' }], 10), [])
  t.same(outlineProblems([], 0), [])
  t.match(outlineProblems([], 10), ['no chapters'])
  t.match(outlineProblems([{ startMs: 5, endMs: 10, headline: 'a' }], 10), [/does not start at 0/])
  t.match(outlineProblems([{ startMs: 0, endMs: 4, headline: 'a' }, { startMs: 6, endMs: 10, headline: 'b' }], 10), [/ends at 4 but chapter 1 starts at 6/])
  t.match(outlineProblems([{ startMs: 0, endMs: 8, headline: 'a' }], 10), [/not at the end of the audio/])
  t.match(outlineProblems([{ startMs: 0, endMs: 10, headline: ' ' }], 10), [/no headline/])
  t.match(outlineProblems([{ startMs: 0, endMs: 0, headline: 'a' }, { startMs: 0, endMs: 10, headline: 'b' }], 10), [/empty or reversed/])
})

t.test('ask sessions belong to one account and remember the last turns', async (t) => {
  const answer = (accountId: string, chargeId: string, question = 'q'): AskCommand => ({
    type: 'RecordAnswer',
    sessionId: 's',
    accountId,
    noteId: null,
    question,
    answer: 'a',
    citedSegments: [],
    citedNotes: [],
    ...gen,
    chargeId,
    now,
  })
  const first = ask.given([]).when(answer('a', 'c1'))
  first.thenMatches(t, [{ type: 'QuestionAnswered', data: { sessionId: 's', accountId: 'a', chargeId: 'c1' } }])
  const e1: AskEvent[] = first.events()
  ask.given(e1).when(answer('b', 'c2')).thenThrows(t, 'not_found')
  ask.given(e1).when(answer('a', 'c1')).thenNothingHappened(t, 'a retried record adds nothing')
  let events: AskEvent[] = e1
  for (let i = 2; i <= 9; i++) events = [...events, ...askDecider.decide(answer('a', `c${i}`, `q${i}`), fold(askDecider, events))]
  const s = fold(askDecider, events)
  t.ok(s.exists && s.turns.length === 6 && s.turns[5]!.question === 'q9')
})

t.test('deliverables are created once; Markdown follows the kind', async (t) => {
  const c: DeliverableCommand = {
    type: 'CreateDeliverable',
    deliverableId: 'd',
    noteId: 'n',
    accountId: 'a',
    kind: 'document',
    template: 'meeting_recap',
    locale: 'en',
    title: 'Recap',
    subject: null,
    sections: [{ heading: 'Summary', paragraphs: ['All good.'], bullets: ['one', 'two'] }],
    file: { blobKey: 'k', fileName: 'f.docx', contentType: 'x', sizeBytes: 1, sha256: 'h' },
    ...gen,
    chargeId: 'c',
    now,
  }
  const created = deliverable.given([]).when(c)
  created.thenMatches(t, [{ type: 'DeliverableCreated' }])
  deliverable.given(created.events()).when(c).thenNothingHappened(t, 'creating it again is a retry')
  deliverable.given(created.events()).when({ ...c, accountId: 'b' }).thenThrows(t, 'conflict', /taken/)
  t.equal(deliverableMarkdown(c, 'document'), '# Recap\n\n## Summary\n\nAll good.\n\n- one\n- two')
  t.equal(deliverableMarkdown({ ...c, sections: [{ heading: '', paragraphs: ['Hi,'], bullets: [] }, ...c.sections] }, 'email'), 'Hi,\n\nSummary:\nAll good.\n\n- one\n- two')
})
