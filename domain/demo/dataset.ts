// The sample library behind the public demo endpoint ({mcp_url}/demo): its own account, folders
// and ready notes with transcripts. Everything here is fixed (ids derived from names, fixed
// timestamps), so seeding it on every start writes it once and then nothing.
//
// The seed uses the note's own events (NoteCreated, NoteEdited, NoteTranscribed, NoteReady) on
// its own streams, so every read model and query treats a sample note exactly like a real one.
import type { Decider } from '../decider.ts'
import { uuidFromName } from '../ids.ts'
import { evolveNote, type NoteEvent, type NoteState, type Origin, type Provider, type SourceType } from '../notes/note.ts'
import type { Transcript, TranscriptSegment } from '../notes/transcript.ts'

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
