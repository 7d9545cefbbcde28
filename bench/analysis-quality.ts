// Precision and recall of the local language engine on the annotated meeting corpus
// (test/fixtures/meetings.ts), per field, for the meeting_minutes and generic templates; also split
// into the meetings looked at while writing the engine (dev: the tuning part) and those written
// after (held-out: never tuned on). Then the same for meeting_minutes on the transcripts without
// speaker labels (as a transcript nobody diarized comes), and how many items each template's
// lists hold over the whole corpus (each template extracts what it promises).
// Run: npx tsx bench/analysis-quality.ts [--verbose]
import { MEETINGS } from '../test/fixtures/meetings.ts'
import { add, emptyTotals, score, table, transcriptOf } from '../test/support/quality.ts'
import { analyzeLocally } from '../engines/language/analyze.ts'
import { TEMPLATES } from '../contract/analysis.ts'

const verbose = process.argv.includes('--verbose')
const runs = [
  { template: 'meeting_minutes', speakers: true },
  { template: 'generic', speakers: true },
  { template: 'meeting_minutes', speakers: false },
]
for (const { template, speakers } of runs) {
  const totals = emptyTotals()
  const byLang = { es: emptyTotals(), en: emptyTotals() }
  const bySplit = { dev: emptyTotals(), 'held-out': emptyTotals() }
  for (const m of MEETINGS) {
    const a = analyzeLocally(transcriptOf(m, { speakers }), template)
    const s = score(m, a)
    add(totals, s)
    add(byLang[m.language], s)
    add(bySplit[m.split], s)
    if (verbose && template === 'meeting_minutes' && speakers && m.split === 'dev') {
      console.log(`\n## ${m.id}`)
      console.log('actions:', JSON.stringify(a.actionItems, null, 1))
      console.log('decisions:', a.decisions)
      console.log('questions:', a.questions)
    }
  }
  console.log(`\n# template ${template}${speakers ? '' : ', WITHOUT speaker labels'}: ${MEETINGS.length} meetings (es ${MEETINGS.filter((m) => m.language === 'es').length}, en ${MEETINGS.filter((m) => m.language === 'en').length})`)
  if (!speakers) console.log('(assignee: the speaker letters the gold names cannot be matched without labels; names said aloud still can)')
  console.log(table(totals))
  for (const l of ['es', 'en'] as const) console.log(`\n  ${l}:\n${table(byLang[l]).replace(/^/gm, '  ')}`)
  for (const sp of ['dev', 'held-out'] as const) console.log(`\n  ${sp} (${MEETINGS.filter((m) => m.split === sp).length} meetings):\n${table(bySplit[sp]).replace(/^/gm, '  ')}`)
}

console.log('\n# items per template over the corpus (action items / decisions / questions)')
for (const template of TEMPLATES) {
  let actions = 0
  let decisions = 0
  let questions = 0
  for (const m of MEETINGS) {
    const a = analyzeLocally(transcriptOf(m), template)
    actions += a.actionItems.length
    decisions += a.decisions.length
    questions += a.questions.length
  }
  console.log(`${template.padEnd(18)} ${String(actions).padStart(3)} / ${String(decisions).padStart(3)} / ${String(questions).padStart(3)}`)
}
