// Precision and recall of the local language engine on the annotated meeting corpus
// (test/fixtures/meetings.ts), per field, for the meeting_minutes and generic templates; also split
// into the meetings looked at while writing the engine (dev) and those written after (held-out).
// Run: npx tsx bench/analysis-quality.ts [--verbose]
import { MEETINGS } from '../test/fixtures/meetings.ts'
import { add, emptyTotals, score, table, transcriptOf } from '../test/support/quality.ts'
import { analyzeLocally } from '../engines/language/analyze.ts'

const verbose = process.argv.includes('--verbose')
for (const template of ['meeting_minutes', 'generic']) {
  const totals = emptyTotals()
  const byLang = { es: emptyTotals(), en: emptyTotals() }
  const bySplit = { dev: emptyTotals(), 'held-out': emptyTotals() }
  for (const m of MEETINGS) {
    const a = analyzeLocally(transcriptOf(m), template)
    const s = score(m, a)
    add(totals, s)
    add(byLang[m.language], s)
    add(bySplit[m.split], s)
    if (verbose && template === 'meeting_minutes') {
      console.log(`\n## ${m.id}`)
      console.log('actions:', JSON.stringify(a.actionItems, null, 1))
      console.log('decisions:', a.decisions)
      console.log('questions:', a.questions)
      console.log('topics:', a.topics)
      console.log('summary:', a.summary)
      console.log('keyPoints:', a.keyPoints)
    }
  }
  console.log(`\n# template ${template}: ${MEETINGS.length} meetings (es ${MEETINGS.filter((m) => m.language === 'es').length}, en ${MEETINGS.filter((m) => m.language === 'en').length})`)
  console.log(table(totals))
  for (const l of ['es', 'en'] as const) console.log(`\n  ${l}:\n${table(byLang[l]).replace(/^/gm, '  ')}`)
  for (const sp of ['dev', 'held-out'] as const) console.log(`\n  ${sp} (${MEETINGS.filter((m) => m.split === sp).length} meetings):\n${table(bySplit[sp]).replace(/^/gm, '  ')}`)
}
