// The deterministic local language engine: extraction in six languages, anchors at segment
// starts, templates that shape the result, debate sections, mind maps, outlines that cover the
// audio, extractive answers. Pure functions: no service needed.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { TEMPLATES, AnalysisContent } from '../contract/analysis.ts'
import { PROFILES } from '../domain/language/templates.ts'
import { localLanguageEngine } from '../engines/language/localEngine.ts'
import { analyzeLocally } from '../engines/language/analyze.ts'
import { outlineLocally } from '../engines/language/outline.ts'
import { answerLocally } from '../engines/language/answer.ts'
import { outlineProblems } from '../domain/analysis/analysis.ts'
import { audioDurationMs, type SourceTranscript } from '../domain/language/content.ts'
import { mmss } from '../domain/language/time.ts'
import { MEETINGS } from './fixtures/meetings.ts'
import { transcriptOf } from './support/quality.ts'

const SPEC_TEMPLATES = ['generic', 'sales', 'legal', 'medical', 'journalism', 'education', 'customer_success', 'meeting_minutes', 'consulting', 'coaching', 'therapy', 'podcast', 'university_class', 'debate']

function transcript(lines: [string, string][], o: { gapMs?: number; language?: string | null; title?: string } = {}): SourceTranscript {
  const gap = o.gapMs ?? 7000
  return {
    noteId: randomUUID(),
    title: o.title ?? 'Test',
    language: o.language ?? null,
    durationMs: lines.length * gap,
    segments: lines.map(([speaker, text], i) => ({ id: randomUUID(), sequence: i, startMs: i * gap + 250, endMs: i * gap + gap - 300, speaker, speakerLabel: speaker, text })),
  }
}

t.test('the 14 templates are exactly the spec list, and each has a profile', async (t) => {
  t.same([...TEMPLATES], SPEC_TEMPLATES)
  t.same(Object.keys(PROFILES).sort(), [...SPEC_TEMPLATES].sort())
})

t.test('given a meeting, every template yields a contract-valid analysis whose anchors are exact segment starts', async (t) => {
  const tr = transcriptOf(MEETINGS[0]!)
  const starts = new Set(tr.segments.map((s) => s.startMs))
  for (const template of TEMPLATES) {
    const a = analyzeLocally(tr, template)
    const checked = AnalysisContent.safeParse(a)
    t.ok(checked.success, `${template}: ${checked.success ? 'valid' : checked.error.message}`)
    for (const k of ['keyPoints', 'actionItems', 'decisions', 'questions'] as const) {
      t.equal(a.anchors![k].length, a[k].length, `${template} anchors.${k} aligned`)
      for (const ms of a.anchors![k]) t.ok(ms !== null && starts.has(ms), `${template} ${k} anchor ${ms} is a segment start`)
    }
    t.equal(a.sections === null, template !== 'debate', `${template}: sections only for debate`)
  }
})

t.test('anchors point at the segment where each item is said', async (t) => {
  const tr = transcriptOf(MEETINGS[2]!)
  const a = analyzeLocally(tr, 'meeting_minutes')
  const textAt = (ms: number) => tr.segments.find((s) => s.startMs === ms)!.text
  a.actionItems.forEach((x, i) => {
    const said = textAt(a.anchors!.actionItems[i]!)
    t.ok(x.text.split(/\s+/).slice(-3).every((w) => said.toLowerCase().includes(w.toLowerCase())), `"${x.text}" is in "${said}"`)
  })
  a.decisions.forEach((d, i) => t.ok(textAt(a.anchors!.decisions[i]!).includes(d.replace(/\.$/, '').slice(-20)), `decision ${i} anchored`))
  a.questions.forEach((q, i) => t.ok(textAt(a.anchors!.questions[i]!).includes(q.slice(-15)), `question ${i} anchored`))
})

t.test('action items, owners, deadlines, decisions and questions in the six languages', async (t) => {
  const cases: { lang: string; lines: string[]; action: { text: RegExp; assignee: string; deadline: string }; decision: RegExp; question: RegExp }[] = [
    {
      lang: 'en',
      lines: ["Morning all, let's start with the budget.", 'Laura will send the revised budget to finance by Friday.', 'We decided to freeze hiring until March.', 'Who is going to present the numbers to the board?'],
      action: { text: /send the revised budget to finance/i, assignee: 'Laura', deadline: 'by Friday' },
      decision: /freeze hiring/,
      question: /present the numbers/,
    },
    {
      lang: 'es',
      lines: ['Buenos días, empezamos con el presupuesto.', 'Andrés se encarga de enviar la factura al cliente antes del lunes.', 'Hemos decidido contratar a una agencia externa.', '¿Quién va a revisar el contrato con el proveedor?'],
      action: { text: /enviar la factura al cliente/i, assignee: 'Andrés', deadline: 'antes del lunes' },
      decision: /contratar a una agencia/,
      question: /revisar el contrato/,
    },
    {
      lang: 'de',
      lines: ['Guten Morgen, wir fangen mit dem Budget an.', 'Klaus wird den Bericht bis Freitag schicken.', 'Wir haben beschlossen, das Budget für die Kampagne zu erhöhen.', 'Wann startet die neue Kampagne eigentlich?'],
      action: { text: /Bericht schicken/i, assignee: 'Klaus', deadline: 'bis Freitag' },
      decision: /Budget für die Kampagne/,
      question: /Kampagne eigentlich/,
    },
    {
      lang: 'fr',
      lines: ['Bonjour à tous, on commence par le budget.', "Pierre va envoyer le devis au client d'ici vendredi.", 'Nous avons décidé de reporter le lancement du produit.', 'Est-ce que le client a validé le budget ?'],
      action: { text: /envoyer le devis au client/i, assignee: 'Pierre', deadline: "d'ici vendredi" },
      decision: /reporter le lancement/,
      question: /validé le budget/,
    },
    {
      lang: 'it',
      lines: ['Buongiorno a tutti, iniziamo con il budget.', 'Giulia si occupa di preparare la presentazione entro venerdì.', 'Abbiamo deciso di cambiare fornitore per la logistica.', 'Chi parla con il cliente domani mattina?'],
      action: { text: /preparare la presentazione/i, assignee: 'Giulia', deadline: 'entro venerdì' },
      decision: /cambiare fornitore/,
      question: /parla con il cliente/,
    },
    {
      lang: 'pt',
      lines: ['Bom dia a todos, vamos começar pelo orçamento.', 'Ricardo vai enviar a proposta ao cliente até sexta.', 'Decidimos adiar o lançamento para maio.', 'Quem vai falar com o fornecedor esta semana?'],
      action: { text: /enviar a proposta ao cliente/i, assignee: 'Ricardo', deadline: 'até sexta' },
      decision: /adiar o lançamento/,
      question: /falar com o fornecedor/,
    },
  ]
  for (const c of cases) {
    const a = analyzeLocally(transcript(c.lines.map((l) => ['A', l])), 'meeting_minutes')
    t.equal(a.actionItems.length, 1, `${c.lang}: one action item`)
    t.match(a.actionItems[0], { text: c.action.text, assignee: c.action.assignee, deadline: c.action.deadline }, `${c.lang}: action item`)
    t.equal(a.decisions.length, 1, `${c.lang}: one decision`)
    t.match(a.decisions[0], c.decision, `${c.lang}: decision`)
    t.equal(a.questions.length, 1, `${c.lang}: one question`)
    t.match(a.questions[0], c.question, `${c.lang}: question`)
  }
})

t.test('who does it: the speaker who commits, the person addressed, nobody when the group is meant', async (t) => {
  const a = analyzeLocally(
    transcript([
      ['A', "I'll book the meeting room for the workshop tomorrow."],
      ['B', 'Sara, could you review the onboarding checklist before Thursday?'],
      ['C', 'Sure, happy to.'],
      ['A', 'Can you share the slides with the whole team?'],
      ['D', 'Yes, no problem.'],
      ['B', 'We need to update the pricing page this week.'],
      ['A', "I won't be able to join the call on Monday."],
      ['C', 'Could you share your screen for a second?'],
    ]),
    'meeting_minutes',
  )
  t.match(a.actionItems, [
    { text: /book the meeting room/i, assignee: 'Speaker A', deadline: 'tomorrow' },
    { text: /review the onboarding checklist/i, assignee: 'Sara', deadline: 'before Thursday' },
    { text: /share the slides/i, assignee: 'Speaker D', deadline: '' },
    { text: /update the pricing page/i, assignee: '', deadline: 'this week' },
  ])
  t.equal(a.actionItems.length, 4, 'a refusal is no commitment')
})

t.test('templates shape the analysis: minutes lead with outcomes, classes favour definitions and questions, facets name key points', async (t) => {
  const lecture = transcript([
    ['A', 'Today we talk about supply and demand in competitive markets.'],
    ['A', 'Elasticity is defined as the percentage change in quantity divided by the percentage change in price.'],
    ['A', 'Markets usually clear when supply equals demand at the equilibrium price.'],
    ['B', 'Does elasticity change along a straight demand curve?'],
    ['A', 'Yes, elasticity changes along a linear demand curve, which surprises many students.'],
    ['A', 'A price ceiling below the equilibrium price creates a shortage in the market.'],
    ['A', 'For example, rent control in big cities often reduces the supply of apartments.'],
    ['B', 'What happens to the shortage when demand grows?'],
    ['A', 'The shortage grows, and waiting lists become longer for everyone.'],
    ['A', 'The reading for next week is chapter four of the textbook.'],
  ])
  const cls = analyzeLocally(lecture, 'university_class')
  const gen = analyzeLocally(lecture, 'generic')
  t.ok(cls.keyPoints.some((k) => /Definition: Elasticity is defined/.test(k)), 'the definition is a named key point of the class')
  t.ok(cls.topics.length > gen.topics.length, 'a class lists more topics')
  t.equal(cls.questions.length, 2)
  t.match(cls.mindmap, /^mindmap\n {2}root\(\(Test\)\)/)

  const meeting = transcriptOf(MEETINGS[3]!)
  const minutes = analyzeLocally(meeting, 'meeting_minutes')
  const podcast = analyzeLocally(meeting, 'podcast')
  t.match(minutes.summary, /decision is to move every certificate|agreed to run a certificate expiry drill/, 'minutes summarise the outcomes')
  t.not(minutes.summary, podcast.summary, 'another template, another emphasis')
  t.match(minutes.mindmap, /\n {4}Decisions\n/, 'the minutes mind map has a Decisions branch')

  const sales = analyzeLocally(
    transcript([
      ['A', 'Thanks for taking the call, I would like to understand your needs first.'],
      ['B', 'We need a tool that our support team can use without training.'],
      ['B', 'Our budget for this year is around twenty thousand euros.'],
      ['A', 'Our price for fifty seats is eighteen thousand euros per year.'],
      ['B', 'Honestly the competition offered us a cheaper license last month.'],
      ['A', 'I can send you a proposal with a discount by Wednesday.'],
    ]),
    'sales',
  )
  t.ok(sales.keyPoints.some((k) => k.startsWith('Budget: ')), 'sales names budget key points')
  t.ok(sales.keyPoints.some((k) => k.startsWith('Competition: ')), 'sales names the competition')
})

t.test('a named speaker reads by name everywhere the engine names speakers, an unnamed one as "Speaker B" in the output’s language; a name that looks like a letter stays a name', async (t) => {
  const base = transcript([
    ['A', 'I think we should move the launch to April because the budget is tight.'],
    ['B', 'I disagree, the campaign needs the March date.'],
    ['A', 'I will send the budget report to the board by Friday.'],
    ['B', 'We decided to keep the launch in April then.'],
  ], { language: 'en', title: 'Budget' })
  // As readmodels/speakerNames.ts gives it: A is named "JJ", B has none.
  const tr = { ...base, segments: base.segments.map((x) => (x.speakerLabel === 'A' ? { ...x, speaker: 'JJ' } : x)) }
  const [item] = analyzeLocally(tr, 'generic').actionItems
  t.match(item, { text: /budget report/ })
  t.equal(item?.assignee, 'JJ', 'the speaker who commits, by name (not "Speaker JJ")')
  const debate = analyzeLocally(tr, 'debate')
  t.ok(debate.sections!.positions.some((p) => p.speaker === 'JJ'), 'a debate section: the name')
  t.ok(debate.sections!.disagreements.some((p) => p.speaker === 'B'), 'a debate section: the letter of the unnamed speaker')
  t.match(debate.mindmap, /\n +JJ: I think we should move the launch/)
  const engine = localLanguageEngine()
  const analysis = analyzeLocally(tr, 'meeting_minutes')
  for (const [locale, line] of [['en', 'Participants: JJ, Speaker B'], ['es', 'Participantes: JJ, Hablante B']] as const) {
    const { draft } = await engine.deliverable({ kind: 'document', template: 'meeting_recap', locale, transcript: tr, analysis, date: '2026-03-01T10:00:00.000Z' })
    t.ok(draft.sections.some((x) => x.bullets.includes(line)), `${locale}: ${line}`)
  }
})

t.test('debate sections carry speaker and the exact segment start', async (t) => {
  const tr = transcript([
    ['A', 'I think remote work makes teams more productive.'],
    ['B', 'I disagree, because people lose the informal conversations that spread knowledge.'],
    ['A', 'The data from our last survey shows output went up by ten percent.'],
    ['B', 'I agree that output went up, but onboarding new people got much harder.'],
    ['A', 'In my opinion a hybrid model with two office days is the right compromise.'],
    ['B', 'Exactly, two office days sounds reasonable to me.'],
  ])
  const a = analyzeLocally(tr, 'debate')
  const s = a.sections!
  const at = new Map(tr.segments.map((x) => [x.startMs, x.speaker]))
  for (const key of ['positions', 'arguments', 'quotes', 'agreements', 'disagreements'] as const) {
    t.ok(s[key].length > 0, `${key} found`)
    for (const item of s[key]) t.equal(at.get(item.t!), item.speaker, `${key}: "${item.text.slice(0, 30)}" is ${item.speaker} at ${item.t}`)
  }
  t.match(s.positions.map((p) => p.text), [/remote work makes teams/, /hybrid model/])
  t.ok(s.disagreements.some((d) => d.speaker === 'B' && /I disagree/.test(d.text)))
  t.ok(s.agreements.some((d) => /Exactly/.test(d.text)))
  t.match(a.mindmap, /Positions/)
})

t.test('the same transcript gives the same analysis (deterministic)', async (t) => {
  const tr = transcriptOf(MEETINGS[1]!)
  t.same(analyzeLocally(tr, 'generic'), analyzeLocally(tr, 'generic'))
  const e = localLanguageEngine()
  t.same(e.info, { engine: 'local', model: 'local-extractive', version: '1.0.0' })
})

/** A long talk in parts with different vocabularies, to find chapters in. */
function longTalk(minutes: number, segmentMs = 12_000): SourceTranscript {
  const themes = [
    ['budget', 'invoice', 'costs', 'spending', 'finance'],
    ['hiring', 'candidates', 'interviews', 'recruiters', 'salary'],
    ['marketing', 'campaign', 'launch', 'audience', 'newsletter'],
    ['security', 'passwords', 'audit', 'certificates', 'firewall'],
    ['customers', 'support', 'tickets', 'complaints', 'renewals'],
  ]
  const n = Math.floor((minutes * 60_000) / segmentMs)
  const segments = Array.from({ length: n }, (_, i) => {
    const theme = themes[Math.floor((i / n) * themes.length)]!
    const w = (k: number) => theme[(i + k) % theme.length]
    return { id: randomUUID(), sequence: i, startMs: i * segmentMs, endMs: i * segmentMs + segmentMs - 700, speaker: i % 2 ? 'B' : 'A', speakerLabel: i % 2 ? 'B' : 'A', text: `We looked at ${w(0)} and ${w(1)} again. The ${w(2)} question depends on ${w(3)} and the ${w(4)} plan.` }
  })
  return { noteId: randomUUID(), title: 'All hands', language: 'en', durationMs: n * segmentMs + 2000, segments }
}

t.test('outline chapters cover the audio in order, without gaps or overlaps, starting at segment starts', async (t) => {
  for (const minutes of [0.5, 3, 9, 25, 61]) {
    const tr = longTalk(minutes)
    const chapters = outlineLocally(tr)
    t.same(outlineProblems(chapters, audioDurationMs(tr)), [], `${minutes} min: invariants hold`)
    const starts = new Set(tr.segments.map((s) => s.startMs))
    for (const c of chapters.slice(1)) t.ok(starts.has(c.startMs), `${minutes} min: chapter at ${c.startMs} starts a segment`)
    t.ok(chapters.every((c) => c.headline.length > 0))
    if (minutes >= 25) {
      t.ok(chapters.length >= 4, `${minutes} min: ${chapters.length} chapters`)
      // Theme changes sit at fifths of the talk: most boundaries land near one.
      const fifths = [1, 2, 3, 4].map((k) => (k * tr.segments.length * 12_000) / 5)
      const near = fifths.filter((f) => chapters.some((c) => Math.abs(c.startMs - f) <= 90_000)).length
      t.ok(near >= 3, `${minutes} min: ${near} of 4 theme changes found`)
    }
  }
  t.same(outlineLocally({ noteId: 'x', title: 'Silence', language: null, durationMs: 5000, segments: [] }), [{ startMs: 0, endMs: 5000, headline: 'Silence' }])
  t.same(outlineLocally({ noteId: 'x', title: 'Empty', language: null, durationMs: 0, segments: [] }), [])
})

t.test('extractive answers quote the best passages with their labels and who said them', async (t) => {
  const passages = [
    { segmentId: 's1', noteId: 'n', noteTitle: 'T', startMs: 61_000, endMs: 65_000, speaker: 'A', speakerLabel: 'A', text: 'We moved the launch to the first of April.', label: `[${mmss(61_000)}]`, score: 5 },
    { segmentId: 's2', noteId: 'n', noteTitle: 'T', startMs: 5_000, endMs: 9_000, speaker: 'B', speakerLabel: 'B', text: 'The launch plan needs a budget.', label: `[${mmss(5_000)}]`, score: 3 },
    { segmentId: 's3', noteId: 'n', noteTitle: 'T', startMs: 90_000, endMs: 95_000, speaker: 'B', speakerLabel: 'B', text: 'Lunch is at noon.', label: `[${mmss(90_000)}]`, score: 0.5 },
  ]
  const a = answerLocally({ question: 'When is the launch?', scope: 'note', passages, history: [] })
  t.same(a.citedSegments, ['s2', 's1'], 'the passages within reach of the best one, in the order said')
  t.match(a.answer, /^This is what the recording says: \[00:05\] “The launch plan needs a budget\.” — Speaker B \[01:01\] “We moved the launch to the first of April\.” — Speaker A$/)
  const named = answerLocally({ question: 'When is the launch?', scope: 'note', passages: passages.map((p) => (p.speakerLabel === 'A' ? { ...p, speaker: 'Alice J.' } : p)), history: [] })
  t.match(named.answer, /\[01:01\] “We moved the launch to the first of April\.” — Alice J\.$/, 'who said it: the name in use, else the letter')
  const es = answerLocally({ question: '¿Cuándo es el lanzamiento?', scope: 'library', passages: [], history: [] })
  t.same(es, { answer: 'Ninguna de tus notas parece hablar de eso.', citedSegments: [] })
})

t.test('issue 16 item 10: on a transcript without speakers, answers are not questions, first-person commitments are action items, and each template keeps what it promises', async (t) => {
  const lines = [
    'Did we decide to move the launch to October?',
    'No. We agreed last week to keep the September date.',
    'I will talk to marketing tomorrow about the campaign.',
    'Can you send me the final press release by Thursday?',
    'For next week, please read chapter four and do the exercises at the end.',
    'We decided to drop the beta badge from the homepage.',
  ]
  const tr = { noteId: 'n', title: 'Follow-up', language: 'en', durationMs: lines.length * 9000, segments: lines.map((text, i) => ({ id: String(i), sequence: i, startMs: i * 9000, endMs: i * 9000 + 8500, speaker: null, speakerLabel: null, text })) }
  const g = analyzeLocally(tr, 'generic')
  t.same(g.decisions, ['We agreed last week to keep the September date.', 'We decided to drop the beta badge from the homepage.'], 'the "No." answers the question: the rest is a decision, not an open question')
  t.same(g.questions, ['Did we decide to move the launch to October?'], 'a request phrased as a question is an action item, not a question')
  t.match(g.actionItems, [{ text: 'Talk to marketing about the campaign', deadline: 'tomorrow' }, { text: /final press release/, deadline: 'by Thursday' }, { text: /read chapter four/i }])
  t.same(analyzeLocally(tr, 'meeting_minutes').actionItems, g.actionItems, 'minutes keep every commitment')
  const coaching = analyzeLocally(tr, 'coaching')
  t.same(coaching.actionItems.map((a) => a.text), ['Talk to marketing about the campaign'], 'coaching: only what the speaker commits to')
  t.same(coaching.decisions, [])
  t.same(analyzeLocally(tr, 'university_class').actionItems.map((a) => a.text), ['Read chapter four and do the exercises at the end'], 'a class: its assignments')
  const podcast = analyzeLocally(tr, 'podcast')
  t.same([podcast.actionItems, podcast.decisions, podcast.questions], [[], [], []], 'a podcast promises themes and quotes, not tasks')
  t.same(analyzeLocally(tr, 'journalism').actionItems, [], 'journalism: no tasks')
})
