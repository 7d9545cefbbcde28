// The BM25 segment index read model: built from NoteTranscribed, idempotent when events are
// applied again, equal to a rebuild from zero, and ranked by BM25 within one account.
import t from 'tap'
import { testService } from './support/service.ts'
import { appendNote } from './support/notes.ts'
import { SEGMENT_INDEX, SEGMENT_STATS, buildSegmentIndex, segmentIndexProjection, withChangedSegments } from '../projections/segmentIndex.ts'
import { rebuildProjection } from '../projections/runner.ts'
import { searchSegments } from '../readmodels/retrieval.ts'
import { termFrequencies } from '../domain/search/terms.ts'
import { idf, termScore } from '../domain/search/bm25.ts'

const snapshot = async (s: Awaited<ReturnType<typeof testService>>) => ({
  index: await s.docs.collection(SEGMENT_INDEX).find({}, { sort: { _id: 1 } }),
  stats: await s.docs.collection(SEGMENT_STATS).find({}, { sort: { _id: 1 } }),
})

t.test('postings per note, statistics per account', async (t) => {
  const doc = buildSegmentIndex('n', 'a', 3, [
    { id: 's0', text: 'The budget, the BUDGET and the presupuestos.' },
    { id: 's1', text: 'Presupuesto aprobado.' },
  ])
  t.same(doc.postings.p_budget, [0, 2])
  t.same(doc.postings.p_presupu, [0, 1, 1, 1], 'accents and plurals meet on one term')
  t.same(doc.segLens, [3, 2])
  t.equal(doc.totalLength, 5)
  t.ok(doc.terms.includes('aprobad'))
})

t.test('BM25: rarer terms weigh more, longer segments less', async (t) => {
  t.ok(idf(100, 1) > idf(100, 50))
  t.ok(termScore(1, 5, 10, 1) > termScore(1, 40, 10, 1))
  t.ok(termScore(3, 10, 10, 1) > termScore(1, 10, 10, 1))
  t.same([...termFrequencies('Budget budgets')], [['budget', 2]])
})

t.test('the index follows the notes, ranks within one account, and equals a rebuild', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const b = await s.account('pro')
  const n1 = await appendNote(s, a.accountId, { lines: [['A', 'The marketing budget grows.'], ['B', 'Marketing, marketing, marketing everywhere.'], ['A', 'The zeppelin budget is tiny.']] })
  await appendNote(s, a.accountId, { lines: [['A', 'Another note about the marketing plan.']] })
  await appendNote(s, b.accountId, { lines: [['A', 'The zeppelin of account b.']] })
  const stats = await s.docs.collection(SEGMENT_STATS).findOne({ _id: a.accountId })
  t.match(stats, { segments: 4 })
  const hits = await searchSegments(s.docs, { accountId: a.accountId, weights: new Map([['zeppeli', 1], ['budget', 1]]), limit: 5 })
  t.equal(hits[0]!.segmentId, n1.segments[2]!.id, 'zeppelin + budget first')
  t.equal(hits[1]!.segmentId, n1.segments[0]!.id)
  t.equal(hits.length, 2, 'account b is never searched')
  const one = await searchSegments(s.docs, { accountId: a.accountId, noteId: n1.noteId, weights: new Map([['marketi', 1]]), limit: 5 })
  t.same(one.map((h) => h.segmentId), [n1.segments[1]!.id, n1.segments[0]!.id])
  t.same(await searchSegments(s.docs, { accountId: b.accountId, noteId: n1.noteId, weights: new Map([['marketi', 1]]), limit: 5 }), [], "another account's note gives nothing")

  const live = await snapshot(s)
  // Applying every event again changes nothing.
  const events = await s.services.events.readAll({ filter: segmentIndexProjection.filter, maxCount: 10_000 })
  await segmentIndexProjection.handle(events, s.docs)
  t.same(await snapshot(s), live, 'idempotent')
  const running = s.services.projections.find((p) => p.name === segmentIndexProjection.name)!
  await running.stop()
  await rebuildProjection(segmentIndexProjection, { events: s.services.events, docs: s.docs })
  t.same(await snapshot(s), live, 'a rebuild from zero gives the same read model')
})

t.test('an edit moves the changed segments to their new text, as a fresh build would have them', async (t) => {
  const segments = [
    { id: 's0', text: 'The budget is approved.' },
    { id: 's1', text: 'Ask Marta about the budget.' },
    { id: 's2', text: 'Nothing else.' },
  ]
  const before = buildSegmentIndex('n', 'a', 3, segments)
  const changes = [
    { segmentId: 's1', before: segments[1]!.text, after: 'Ask Marta about the forecast budget.' },
    { segmentId: 's2', before: segments[2]!.text, after: 'Nothing else about the forecast.' },
  ]
  const edited = withChangedSegments(before, 4, changes)
  const fresh = buildSegmentIndex('n', 'a', 4, [segments[0]!, { id: 's1', text: changes[0]!.after }, { id: 's2', text: changes[1]!.after }])
  t.same(edited, fresh)
  t.same(withChangedSegments(before, 4, [{ segmentId: 's9', before: 'x', after: 'y' }]).postings, before.postings, 'an unknown segment changes nothing')
})
