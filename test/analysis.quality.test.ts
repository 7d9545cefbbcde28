// The local engine's quality on the annotated meeting corpus (test/fixtures/meetings.ts), per
// field. Prints precision and recall; the floors sit a little under the measured values, so a
// change that makes the extraction worse fails here. `npx tsx bench/analysis-quality.ts` prints
// the same table with per-language and dev/held-out splits.
import t from 'tap'
import { MEETINGS } from './fixtures/meetings.ts'
import { add, emptyTotals, FIELDS, precision, recall, score, table, transcriptOf } from './support/quality.ts'
import { analyzeLocally } from '../engines/language/analyze.ts'

const FLOORS: Record<(typeof FIELDS)[number], { precision: number; recall: number }> = {
  actionItems: { precision: 0.8, recall: 0.7 },
  assignee: { precision: 0.8, recall: 0.6 },
  deadline: { precision: 0.85, recall: 0.55 },
  decisions: { precision: 0.75, recall: 0.75 },
  questions: { precision: 0.85, recall: 0.85 },
}

t.test('meeting_minutes on the corpus: precision and recall per field', async (t) => {
  const totals = emptyTotals()
  for (const m of MEETINGS) add(totals, score(m, analyzeLocally(transcriptOf(m), 'meeting_minutes')))
  t.comment(`\n${table(totals)}`)
  for (const f of FIELDS) {
    t.ok(precision(totals[f]) >= FLOORS[f].precision, `${f} precision ${precision(totals[f]).toFixed(2)} >= ${FLOORS[f].precision}`)
    t.ok(recall(totals[f]) >= FLOORS[f].recall, `${f} recall ${recall(totals[f]).toFixed(2)} >= ${FLOORS[f].recall}`)
  }
  t.ok(MEETINGS.some((m) => m.language === 'es') && MEETINGS.some((m) => m.language === 'en'), 'Spanish and English meetings')
})
