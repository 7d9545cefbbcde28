// Deciders of the language features, given/when/then: analyses and outline (stream
// analysis-<noteId>), ask sessions (ask-<sessionId>), deliverables (deliverable-<id>).
import t from 'tap'
import { analysisDecider, outlineProblems, type AnalysisEvent, type AnalysisCommand } from '../domain/analysis/analysis.ts'
import { askDecider, type AskCommand, type AskEvent } from '../domain/ask/session.ts'
import { deliverableDecider, deliverableMarkdown, type DeliverableCommand } from '../domain/deliverables/deliverable.ts'
import { fold } from '../domain/decider.ts'
import { DomainError } from '../domain/errors.ts'
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

const given = (events: AnalysisEvent[]) => fold(analysisDecider, events)
const when = (events: AnalysisEvent[], c: AnalysisCommand) => analysisDecider.decide(c, given(events))

t.test('analyses: every generation is an event with template, engine, model and version; failures too', async (t) => {
  const events = when([], {
    type: 'RecordAnalyses',
    noteId: 'n',
    accountId: 'a',
    now,
    results: [
      { ok: true, template: 'generic', analysis: draft, ...gen, chargeId: 'c1' },
      { ok: false, template: 'sales', error: 'llm_invalid_json', reason: 'bad', ...gen, chargeId: 'c2' },
    ],
  })
  t.match(events, [
    { type: 'AnalysisGenerated', data: { template: 'generic', engine: 'local', model: 'local-extractive', version: '1.0.0', chargeId: 'c1', analysis: draft, at: now } },
    { type: 'AnalysisFailed', data: { template: 'sales', error: 'llm_invalid_json', reason: 'bad', chargeId: 'c2' } },
  ])
  t.test('then regenerating adds a generation; the same charge again adds nothing', async (t) => {
    const again = when(events, { type: 'RecordAnalyses', noteId: 'n', accountId: 'a', now, results: [{ ok: true, template: 'generic', analysis: draft, ...gen, chargeId: 'c3' }, { ok: true, template: 'generic', analysis: draft, ...gen, chargeId: 'c1' }] })
    t.equal(again.length, 1)
    t.equal(fold(analysisDecider, [...events, ...again]).generations.generic, 2)
  })
  t.test("then another account cannot record on this note's stream", async (t) => {
    t.throws(() => when(events, { type: 'RecordAnalyses', noteId: 'n', accountId: 'other', now, results: [] }), new DomainError('not_found', ''))
  })
})

t.test('outline: recorded once; a second one (a concurrent generation) records nothing; failures set only the attempt', async (t) => {
  const chapters = [
    { startMs: 0, endMs: 4000, headline: 'One' },
    { startMs: 4000, endMs: 9000, headline: 'Two' },
  ]
  const first = when([], { type: 'RecordOutline', noteId: 'n', accountId: 'a', chapters, durationMs: 9000, ...gen, chargeId: 'c1', now })
  t.match(first, [{ type: 'OutlineGenerated', data: { chapters, durationMs: 9000, chargeId: 'c1' } }])
  t.same(when(first, { type: 'RecordOutline', noteId: 'n', accountId: 'a', chapters, durationMs: 9000, ...gen, chargeId: 'c2', now }), [])
  const failed = when([], { type: 'RecordOutlineFailure', noteId: 'n', accountId: 'a', reason: 'timeout', ...gen, chargeId: 'c3', now })
  t.match(given(failed), { outline: null, outlineAttemptedAt: now })
  t.throws(
    () => when([], { type: 'RecordOutline', noteId: 'n', accountId: 'a', chapters: [{ startMs: 0, endMs: 5000, headline: 'x' }, { startMs: 4000, endMs: 9000, headline: 'y' }], durationMs: 9000, ...gen, chargeId: 'c4', now }),
    { code: 'llm_invalid_json' },
  )
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
  const e1 = askDecider.decide(answer('a', 'c1'), askDecider.initialState())
  t.match(e1, [{ type: 'QuestionAnswered', data: { sessionId: 's', accountId: 'a', chargeId: 'c1' } }])
  const s1 = fold(askDecider, e1)
  t.throws(() => askDecider.decide(answer('b', 'c2'), s1), { code: 'not_found' }, "another account's session is unknown")
  t.same(askDecider.decide(answer('a', 'c1'), s1), [], 'a retried record adds nothing')
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
  const e = deliverableDecider.decide(c, deliverableDecider.initialState())
  t.equal(e.length, 1)
  t.same(deliverableDecider.decide(c, fold(deliverableDecider, e)), [])
  t.equal(deliverableMarkdown(c, 'document'), '# Recap\n\n## Summary\n\nAll good.\n\n- one\n- two')
  t.equal(deliverableMarkdown({ ...c, sections: [{ heading: '', paragraphs: ['Hi,'], bullets: [] }, ...c.sections] }, 'email'), 'Hi,\n\nSummary:\nAll good.\n\n- one\n- two')
})
