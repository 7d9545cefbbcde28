// The sample library behind the public demo endpoint ({mcp_url}/demo): its own account, folders
// and ready notes with transcripts, speaker names, analyses and outlines. Everything here is fixed
// (ids derived from names, fixed timestamps), so seeding it on every start writes it once and
// then nothing.
//
// The seed uses the real events: the note's own (NoteCreated, NoteEdited, NoteTranscribed,
// NoteReady), the speaker names through the RenameSpeaker command, the analyses and outlines
// through the analysis decider's RecordAnalyses and RecordOutline; so every read model and
// query treats a sample note exactly like a real one. The analyses are written by hand, like the
// transcripts: engine and model `sample`, never paid for (their `chargeId` names no ledger
// charge; it only makes each record happen once).
import type { Decider } from '../decider.ts'
import { uuidFromName } from '../ids.ts'
import { evolveNote, type NoteEvent, type NoteState, type Origin, type Provider, type SourceType } from '../notes/note.ts'
import type { Transcript, TranscriptSegment } from '../notes/transcript.ts'
import { audioDurationMs, type ActionItemDraft, type AnalysisDraft, type ChapterDraft } from '../language/content.ts'
import type { AnalysisCommand, TemplateResult } from '../analysis/analysis.ts'

const NS = 'notes-service:mcp-demo'
export const DEMO_ACCOUNT_ID = uuidFromName(NS, 'account')
export const DEMO_ACCOUNT_NAME = 'Demo library'
/** Read-only anyway; `pro` so the sample shows what a paying account sees. */
export const DEMO_PLAN = 'pro' as const

export interface DemoFolder {
  folderId: string
  name: string
}

export const DEMO_FOLDERS: readonly DemoFolder[] = [
  { folderId: uuidFromName(NS, 'folder:meetings'), name: 'Meetings' },
  { folderId: uuidFromName(NS, 'folder:podcasts'), name: 'Podcasts' },
]

type Line = [speaker: string, startMs: number, endMs: number, text: string]
/** An analysis item and the start of the segment it is said in. */
type Anchored<T> = [item: T, atMs: number]

export interface DemoAnalysis {
  template: string
  summary: string
  keyPoints: Anchored<string>[]
  actionItems: Anchored<ActionItemDraft>[]
  decisions: Anchored<string>[]
  questions: Anchored<string>[]
  topics: string[]
  mindmap: string | null
}

export interface DemoNote {
  key: string
  noteId: string
  title: string
  description: string
  sourceType: SourceType
  origin: Origin
  provider: Provider | null
  sourceUrl: string | null
  folderId: string | null
  tags: string[]
  language: string
  createdAt: string
  lines: Line[]
  /** Names the user "confirmed", by diarizer label; a label left out stays unnamed. */
  speakerNames: Record<string, string>
  analyses: DemoAnalysis[]
  /** Chapters by their first segment's start; each ends where the next starts, the last with the audio. */
  chapters: [startMs: number, headline: string][]
}

const note = (n: Omit<DemoNote, 'noteId'>): DemoNote => ({ ...n, noteId: uuidFromName(NS, `note:${n.key}`) })

export const DEMO_NOTES: readonly DemoNote[] = [
  note({
    key: 'product-sync',
    title: 'Weekly product sync: onboarding revamp',
    description: 'Decisions on the new onboarding flow and the launch date.',
    sourceType: 'recording',
    origin: 'recording',
    provider: null,
    sourceUrl: null,
    folderId: DEMO_FOLDERS[0]!.folderId,
    tags: ['product', 'weekly'],
    language: 'en-US',
    createdAt: '2026-03-02T09:30:00.000Z',
    lines: [
      ['A', 0, 6200, 'Good morning everyone. Today we decide on the onboarding revamp and the launch date.'],
      ['B', 6400, 14800, 'Thanks Maya. The new flow cuts sign-up from seven steps to three, and the test group finished forty percent faster.'],
      ['A', 15000, 21500, 'That is a big win. Daniel, what is still open before we can ship it?'],
      ['B', 21700, 30100, 'Two things: the email verification screen and the translations for Spanish and German.'],
      ['A', 30300, 37900, 'Let us decide then: we launch on the twenty-third of March, with Spanish and German ready.'],
      ['B', 38100, 44600, 'Agreed. I will own the verification screen and send the copy to the translators by Friday.'],
      ['A', 44800, 52300, 'One question for next week: do we keep the optional tour at the end, or drop it?'],
      ['B', 52500, 58000, 'I will bring the numbers on how many people skip it.'],
    ],
    speakerNames: { A: 'Maya', B: 'Daniel' },
    analyses: [
      {
        template: 'meeting_minutes',
        summary: 'Maya and Daniel agree to launch the revamped onboarding, which cuts sign-up from seven steps to three, on 23 March with Spanish and German ready.',
        keyPoints: [
          ['The new flow cuts sign-up from seven steps to three', 6400],
          ['The test group finished forty percent faster', 6400],
          ['Still open: the email verification screen and the Spanish and German translations', 21700],
        ],
        actionItems: [
          [{ text: 'Finish the email verification screen', assignee: 'Daniel', deadline: 'before the launch on 23 March' }, 38100],
          [{ text: 'Send the copy to the translators', assignee: 'Daniel', deadline: 'Friday' }, 38100],
          [{ text: 'Bring the numbers on how many people skip the optional tour', assignee: 'Daniel', deadline: 'next week' }, 52500],
        ],
        decisions: [['Launch the onboarding revamp on 23 March, with Spanish and German ready', 30300]],
        questions: [['Keep the optional tour at the end of onboarding, or drop it?', 44800]],
        topics: ['onboarding', 'launch date', 'translations'],
        mindmap: 'mindmap\n  root((Weekly product sync))\n    Decisions\n      Launch on 23 March\n    Action items\n      Verification screen\n      Copy to translators\n    Open questions\n      Optional tour',
      },
    ],
    chapters: [
      [0, 'Results of the new onboarding flow'],
      [15000, 'What is left before shipping'],
      [30300, 'Launch date and owners'],
      [44800, 'Open question: the optional tour'],
    ],
  }),
  note({
    key: 'coffee-podcast',
    title: 'The Coffee Hour, episode 12: where espresso came from',
    description: 'A short history of espresso machines, from Turin to every street corner.',
    sourceType: 'url',
    origin: 'podcast',
    provider: 'podcast-rss',
    sourceUrl: 'https://podcasts.example.org/coffee-hour/feed.rss',
    folderId: DEMO_FOLDERS[1]!.folderId,
    tags: ['podcast', 'history'],
    language: 'en-GB',
    createdAt: '2026-02-20T18:00:00.000Z',
    lines: [
      ['A', 0, 7400, 'Welcome to The Coffee Hour. I am Priya, and with me is the historian Tom Okafor.'],
      ['B', 7600, 16900, 'Hello Priya. Espresso starts in Turin in 1884, when Angelo Moriondo patents a steam machine for brewing coffee in bulk.'],
      ['A', 17100, 23800, 'So the first espresso machine was made to serve crowds, not single cups?'],
      ['B', 24000, 33600, 'Exactly. The single shot comes later, with Bezzera and Pavoni in Milan around 1901, and the lever machines after the war.'],
      ['A', 33800, 40200, 'And the crema, the foam on top, that arrives with the lever?'],
      ['B', 40400, 49500, 'Yes. Achille Gaggia’s lever pushed water at high pressure in 1948, and the crema became the sign of a good espresso.'],
      ['A', 49700, 55000, 'Tom, thank you. Next week: how coffee reached Vienna.'],
    ],
    speakerNames: { A: 'Priya', B: 'Tom Okafor' },
    analyses: [
      {
        template: 'podcast',
        summary:
          'Priya and the historian Tom Okafor trace espresso from Angelo Moriondo’s bulk-brewing steam machine (Turin, 1884) through the single-shot machines of Bezzera and Pavoni (Milan, around 1901) to Achille Gaggia’s 1948 lever, which brought the crema.',
        keyPoints: [
          ['Angelo Moriondo patented a steam machine for brewing coffee in bulk in Turin in 1884', 7600],
          ['The single shot arrived with Bezzera and Pavoni in Milan around 1901', 24000],
          ['Achille Gaggia’s 1948 lever pushed water at high pressure and made the crema the sign of a good espresso', 40400],
        ],
        actionItems: [],
        decisions: [],
        questions: [['Was the first espresso machine made to serve crowds rather than single cups?', 17100]],
        topics: ['espresso', 'history of coffee', 'Italy'],
        mindmap: null,
      },
    ],
    chapters: [
      [0, 'Welcome and guest'],
      [7600, 'Turin, 1884: brewing for crowds'],
      [24000, 'Milan and the single shot'],
      [40400, 'Gaggia’s lever and the crema'],
      [49700, 'Next week: Vienna'],
    ],
  }),
  note({
    key: 'customer-interview',
    title: 'Customer interview: Lumen Logistics',
    description: 'Interview with the operations lead of a logistics customer about reporting needs.',
    sourceType: 'upload',
    origin: 'audio',
    provider: null,
    sourceUrl: null,
    folderId: DEMO_FOLDERS[0]!.folderId,
    tags: ['customer', 'research'],
    language: 'en-US',
    createdAt: '2026-02-27T15:10:00.000Z',
    lines: [
      ['A', 0, 5600, 'Thanks for joining, Sofia. How does your team use the weekly reports today?'],
      ['B', 5800, 15200, 'We export them every Monday and rebuild the charts in a spreadsheet, because we need the numbers per warehouse.'],
      ['A', 15400, 20100, 'How long does that take?'],
      ['B', 20300, 28700, 'About three hours a week. A filter by warehouse and a scheduled export would save most of it.'],
      ['A', 28900, 35500, 'Would you pay more for the scheduled export, or expect it in your current plan?'],
      ['B', 35700, 43900, 'In the current plan, honestly. But an API for the raw data is something we would pay for.'],
    ],
    // The interviewer never says their name: only the customer is named.
    speakerNames: { B: 'Sofia' },
    analyses: [
      {
        template: 'customer_success',
        summary:
          'Sofia, who leads operations at Lumen Logistics, rebuilds the weekly reports per warehouse in a spreadsheet every Monday, about three hours a week. A warehouse filter and scheduled exports would save most of it; she expects those in the current plan but would pay for an API to the raw data.',
        keyPoints: [
          ['The team exports the weekly reports every Monday and rebuilds the charts per warehouse in a spreadsheet', 5800],
          ['That takes about three hours a week', 20300],
          ['A filter by warehouse and a scheduled export would save most of it', 20300],
          ['An API for the raw data is something they would pay for', 35700],
        ],
        actionItems: [],
        decisions: [],
        questions: [['Would the customer pay more for scheduled exports, or expect them in the current plan?', 28900]],
        topics: ['weekly reports', 'exports', 'pricing'],
        mindmap: null,
      },
    ],
    chapters: [
      [0, 'How the weekly reports are used'],
      [15400, 'Time spent and what would help'],
      [28900, 'What they would pay for'],
    ],
  }),
  note({
    key: 'history-class',
    title: 'Clase de historia: la imprenta de Gutenberg',
    description: 'Clase sobre la imprenta de tipos móviles y su efecto en Europa.',
    sourceType: 'upload',
    origin: 'audio',
    provider: null,
    sourceUrl: null,
    folderId: null,
    tags: ['education'],
    language: 'es-ES',
    createdAt: '2026-02-12T11:00:00.000Z',
    lines: [
      ['A', 0, 8200, 'Hoy hablamos de la imprenta de tipos móviles que Johannes Gutenberg desarrolló en Maguncia hacia 1450.'],
      ['A', 8400, 16800, 'La Biblia de Gutenberg, impresa hacia 1455, es el primer gran libro impreso con tipos móviles en Europa.'],
      ['B', 17000, 22300, 'Profesora, ¿por qué fue tan importante si ya existían los libros copiados a mano?'],
      ['A', 22500, 32400, 'Por el coste y la velocidad: en 1500 ya circulaban millones de libros impresos, y las ideas viajaban mucho más rápido.'],
      ['A', 32600, 39000, 'Para la próxima clase, leed el capítulo sobre la Reforma y la imprenta.'],
    ],
    speakerNames: { A: 'Elena Ruiz' },
    analyses: [
      {
        template: 'university_class',
        summary:
          'La clase presenta la imprenta de tipos móviles que Gutenberg desarrolló en Maguncia hacia 1450 y explica por qué fue decisiva: abarató y aceleró los libros, y con ellos la circulación de las ideas.',
        keyPoints: [
          ['Gutenberg desarrolló la imprenta de tipos móviles en Maguncia hacia 1450', 0],
          ['La Biblia de Gutenberg, hacia 1455, es el primer gran libro impreso con tipos móviles en Europa', 8400],
          ['Hacia 1500 ya circulaban millones de libros impresos', 22500],
        ],
        actionItems: [[{ text: 'Leer el capítulo sobre la Reforma y la imprenta', assignee: 'la clase', deadline: 'la próxima clase' }, 32600]],
        decisions: [],
        questions: [['¿Por qué fue tan importante la imprenta si ya existían libros copiados a mano?', 17000]],
        topics: ['imprenta', 'Gutenberg', 'historia de Europa'],
        mindmap: null,
      },
    ],
    chapters: [
      [0, 'La imprenta de Gutenberg'],
      [17000, 'Por qué cambió Europa'],
      [32600, 'Tarea para la próxima clase'],
    ],
  }),
]

export function demoTranscript(n: DemoNote): Transcript {
  const segments: TranscriptSegment[] = n.lines.map(([speaker, startMs, endMs, text], i) => ({
    id: uuidFromName(NS, `segment:${n.key}:${i}`),
    sequence: i,
    startMs,
    endMs,
    speakerLabel: speaker,
    text,
    confidence: 0.97,
    locale: n.language,
    words: null,
  }))
  const last = n.lines[n.lines.length - 1]!
  return {
    language: n.language,
    languagesDetected: [n.language.slice(0, 2)],
    durationSeconds: Math.ceil(last[2] / 1000),
    engine: 'sample',
    provider: null,
    model: null,
    segments,
  }
}

/** The events that make a sample note: created, filed, transcribed, ready; all at its fixed time. */
export function demoNoteEvents(n: DemoNote): NoteEvent[] {
  const at = n.createdAt
  const transcript = demoTranscript(n)
  return [
    {
      type: 'NoteCreated',
      data: {
        noteId: n.noteId,
        accountId: DEMO_ACCOUNT_ID,
        sourceType: n.sourceType,
        origin: n.origin,
        provider: n.provider,
        sourceUrl: n.sourceUrl,
        title: n.title,
        language: n.language,
        keepAudio: false,
        upload: null,
        jobId: null,
        reservationId: null,
        at,
      },
    },
    { type: 'NoteEdited', data: { description: n.description, folderId: n.folderId, tags: n.tags, at } },
    { type: 'NoteTranscribed', data: { transcript, at } },
    { type: 'NoteReady', data: { durationSeconds: transcript.durationSeconds, language: n.language, at } },
  ]
}

export type SeedDemoNote = { type: 'SeedDemoNote'; note: DemoNote }

/** Writes a sample note into an empty stream; a stream that exists already is left alone. */
export const demoNoteDecider: Decider<SeedDemoNote, NoteEvent, NoteState> = {
  initialState: () => ({ exists: false }),
  evolve: evolveNote,
  decide: (c, s) => (s.exists ? [] : demoNoteEvents(c.note)),
}

// ---- speakers, analyses, outline ----------------------------------------------------------------

/** When the sample analyses and outline were made: ten minutes after the note. */
const analysedAt = (n: DemoNote) => new Date(Date.parse(n.createdAt) + 10 * 60_000).toISOString()
const SAMPLE = { engine: 'sample', model: 'sample', version: '1' } as const

export function demoAnalysisDraft(a: DemoAnalysis): AnalysisDraft {
  const at = <T>(items: Anchored<T>[]) => items.map(([, ms]) => ms)
  const of = <T>(items: Anchored<T>[]) => items.map(([item]) => item)
  return {
    summary: a.summary,
    keyPoints: of(a.keyPoints),
    actionItems: of(a.actionItems),
    decisions: of(a.decisions),
    questions: of(a.questions),
    topics: a.topics,
    anchors: { keyPoints: at(a.keyPoints), actionItems: at(a.actionItems), decisions: at(a.decisions), questions: at(a.questions) },
    sections: null,
    mindmap: a.mindmap,
  }
}

/** RecordAnalyses for the note's sample analyses; the decider records a given chargeId once. */
export function demoAnalysesCommand(n: DemoNote): AnalysisCommand {
  const results: TemplateResult[] = n.analyses.map((a) => ({
    ok: true,
    template: a.template,
    analysis: demoAnalysisDraft(a),
    ...SAMPLE,
    chargeId: uuidFromName(NS, `seed:analysis:${n.key}:${a.template}`),
  }))
  return { type: 'RecordAnalyses', noteId: n.noteId, accountId: DEMO_ACCOUNT_ID, results, speakers: n.speakerNames, now: analysedAt(n) }
}

/** The audio's length as the outline sees it (the same rule the outline command uses). */
export const demoDurationMs = (n: DemoNote): number => {
  const t = demoTranscript(n)
  return audioDurationMs({ durationMs: t.durationSeconds === null ? null : t.durationSeconds * 1000, segments: t.segments.map((s) => ({ ...s, speaker: s.speakerLabel })) })
}

export function demoChapters(n: DemoNote): ChapterDraft[] {
  const end = demoDurationMs(n)
  return n.chapters.map(([startMs, headline], i) => ({ startMs, endMs: n.chapters[i + 1]?.[0] ?? end, headline }))
}

/** RecordOutline for the note's sample chapters; a note that has an outline records nothing. */
export function demoOutlineCommand(n: DemoNote): AnalysisCommand {
  return {
    type: 'RecordOutline',
    noteId: n.noteId,
    accountId: DEMO_ACCOUNT_ID,
    chapters: demoChapters(n),
    durationMs: demoDurationMs(n),
    ...SAMPLE,
    chargeId: uuidFromName(NS, `seed:outline:${n.key}`),
    now: analysedAt(n),
  }
}
