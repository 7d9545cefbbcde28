// Each segment carries the language it was spoken in, and the transcript's languages follow from
// its segments (domain/notes/assemble.ts); text never carries U+FFFD from a split multi-byte
// token (adapters/ctranslate2/fasterWhisper.ts).
import t from 'tap'
import { assembleTranscript, type RawSegment } from '../domain/notes/assemble.ts'
import { withoutReplacement } from '../adapters/ctranslate2/fasterWhisper.ts'

const seg = (startMs: number, endMs: number, text: string, language?: string | null): RawSegment => ({ startMs, endMs, text, speaker: null, confidence: 0.9, words: null, ...(language !== undefined ? { language } : {}) })
const input = (segments: RawSegment[], language: string | null, languagesDetected: string[]) => ({
  noteId: 'n1',
  jobId: 'j1',
  segments,
  speakersAreNames: false,
  language,
  languagesDetected,
  durationSeconds: 30,
  engine: 'faster-whisper',
  provider: 'local',
  model: 'whisper-base',
})

t.test('given segments the engine labelled one by one, then each keeps its own locale and languagesDetected lists them, the most speech first', async (t) => {
  const tr = assembleTranscript(input([seg(0, 4000, 'Good morning everyone.', 'en'), seg(4500, 12_000, 'Buenos días a todos, la reunión de hoy.', 'es'), seg(12_500, 15_000, 'Thank you.', 'en')], 'en', ['en']))
  t.same(tr.segments.map((s) => s.locale), ['en', 'es', 'en'])
  t.same(tr.languagesDetected, ['es', 'en'], 'from the segments, not the engine list')
  t.equal(tr.language, 'en')
})

t.test('given segments without their own language (other engines, published transcripts), then every locale is the transcript language and the engine list stays', async (t) => {
  const tr = assembleTranscript(input([seg(0, 4000, 'Hola.'), seg(4000, 8000, 'Hello.', null)], 'es-ES', ['es', 'en']))
  t.same(tr.segments.map((s) => s.locale), ['es-ES', 'es-ES'])
  t.same(tr.languagesDetected, ['es', 'en'])
})

t.test('given a word split in the middle of a multi-byte character, then the text has no replacement character', async (t) => {
  t.equal(withoutReplacement('seitest\uFFFDlich'), 'seitestlich')
  t.equal(withoutReplacement('Grüße'), 'Grüße', 'whole characters are kept')
})
