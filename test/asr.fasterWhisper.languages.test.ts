// The default engine (faster-whisper, Whisper base) on recordings that change language: every
// segment in the language spoken and labelled with it (no translation into the first language),
// the detectable languages limited by ASR_LANGUAGES, a language hint holding everywhere, every
// range the service's VAD marks as speech transcribed and nothing outside it, and the same
// transcript byte for byte on every run and after a restart; through the service, the diarizer's
// speaker turns found before recognition and each segment's locale in the note's transcript.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { fasterWhisperEngine } from '../adapters/ctranslate2/fasterWhisper.ts'
import type { Recognition, SpeechEngine, SpeechRequest } from '../ports/speechEngine.ts'
import { tempDir } from './support/tmp.ts'
import { readFileSync } from 'node:fs'
import { ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'
import { testService } from './support/service.ts'
import { startHttpServer } from './support/httpServer.ts'
import { audit, createImport, transcriptOf, waitForNote } from './support/pipeline.ts'
import { detectTextLanguage } from '../domain/languages.ts'

t.setTimeout(900_000)
const MODELS = resolve('.ci', 'models')
const tmp = tempDir('asr-lang-')
t.teardown(tmp.remove)
const engines: SpeechEngine[] = []
t.teardown(async () => {
  for (const e of engines) await e.close?.()
})
const engine = (languages: string[] = []) => {
  const e = fasterWhisperEngine({ model: 'base', modelsDir: MODELS, python: 'python3', threads: 2, computeType: 'int8', beamSize: 1, languages })
  engines.push(e)
  return e
}

interface Turn {
  voice: string
  text: string
  /** sox effects for this turn (e.g. a telephone band). */
  effects?: string[]
  /** Seconds of silence after it. */
  pause?: number
}

/**
 * One 16 kHz mono WAV of the turns (espeak-ng voices), and where each turn's speech is (ms). Made
 * with sox's `-D` (no dither) everywhere: its dither is random on every run, and that alone moved
 * Whisper's confidence that the Spanish turn is Spanish between 0.64 and 0.77 over 12 runs, so
 * now and then under the 0.6 the worker trusts (a CI run labelled the turn `en`).
 */
function recording(name: string, turns: Turn[]): { wav: string; spans: { startMs: number; endMs: number }[] } {
  const parts: string[] = []
  const spans: { startMs: number; endMs: number }[] = []
  let at = 500
  const lead = join(tmp.dir, `${name}-lead.wav`)
  execFileSync('sox', ['-D', '-n', '-r', '16000', '-b', '16', '-c', '1', lead, 'trim', '0', '0.5'])
  parts.push(lead)
  turns.forEach((turn, i) => {
    const raw = join(tmp.dir, `${name}-${i}.raw.wav`)
    const out = join(tmp.dir, `${name}-${i}.wav`)
    execFileSync('espeak-ng', ['-v', turn.voice, '-w', raw, turn.text])
    execFileSync('sox', ['-D', raw, '-r', '16000', '-b', '16', '-c', '1', out, ...(turn.effects ?? []), 'pad', '0', String(turn.pause ?? 0.8)])
    const seconds = Number(execFileSync('soxi', ['-D', out]).toString())
    spans.push({ startMs: at, endMs: at + Math.round((seconds - (turn.pause ?? 0.8)) * 1000) })
    at += Math.round(seconds * 1000)
    parts.push(out)
  })
  const wav = join(tmp.dir, `${name}.wav`)
  execFileSync('sox', ['-D', ...parts, wav])
  return { wav, spans }
}

const request = (wav: string, extra: Partial<SpeechRequest> = {}): SpeechRequest => ({ wavPath: wav, durationSeconds: 20, language: null, workDir: tmp.dir, ...extra })
const plain = (s: string) => s.toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z ]/g, ' ').replace(/\s+/g, ' ')
/** The segments overlapping a span. */
const within = (r: Recognition, span: { startMs: number; endMs: number }) => r.segments.filter((s) => s.endMs > span.startMs && s.startMs < span.endMs)

const MEETING: Turn[] = [
  { voice: 'en-us', text: 'Good morning everyone. The budget review is finished and we ship on Friday.' },
  { voice: 'es', text: 'Buenos días a todos. La reunión de hoy trata del presupuesto del próximo año.' },
  { voice: 'de', text: 'Guten Morgen zusammen. Wir besprechen heute das Budget für das nächste Jahr.' },
  { voice: 'en-us', text: 'Thank you. Let us look at the numbers for the second quarter.' },
]
const EXPECT: [code: string, words: RegExp][] = [
  ['en', /budget review/],
  ['es', /buenos dias|presupuesto/],
  ['de', /guten morgen|nachste jahr/],
  ['en', /numbers|second quarter/],
]

const base = engine()
const meeting = recording('meeting', MEETING)

t.test('the recording is the same bytes every time it is made', async (t) => {
  t.ok(readFileSync(recording('meeting-again', MEETING).wav).equals(readFileSync(meeting.wav)))
})
let first: Recognition

t.test('given a meeting that switches from English to Spanish to German and back, when it is transcribed without a hint, then each turn comes out in its own language and is labelled so', async (t) => {
  first = await base.transcribe(request(meeting.wav, { speech: meeting.spans }))
  meeting.spans.forEach((span, i) => {
    const [code, words] = EXPECT[i]!
    const segs = within(first, span)
    t.ok(segs.length > 0, `turn ${i + 1} has text`)
    t.ok(segs.every((s) => s.language === code), `turn ${i + 1} labelled ${code}: ${segs.map((s) => s.language).join(',')}`)
    t.match(plain(segs.map((s) => s.text).join(' ')), words, `turn ${i + 1} in ${code}, not translated: ${segs.map((s) => s.text).join(' ')}`)
  })
  t.same([...first.languages!].sort(), ['de', 'en', 'es'])
  t.equal(first.language, 'en', 'the language with the most speech')
})

t.test('given the same recording, when it is transcribed again, and again by a restarted engine, then the transcript is identical byte for byte', async (t) => {
  const again = await base.transcribe(request(meeting.wav, { speech: meeting.spans }))
  t.equal(JSON.stringify(again), JSON.stringify(first))
  const restarted = engine()
  const fresh = await restarted.transcribe(request(meeting.wav, { speech: meeting.spans }))
  t.equal(JSON.stringify(fresh), JSON.stringify(first))
})

t.test('given a language hint, then every segment is in that language, whatever was spoken', async (t) => {
  const r = await base.transcribe(request(meeting.wav, { speech: meeting.spans, language: 'es' }))
  t.equal(r.language, 'es')
  t.same(r.languages, ['es'])
  t.ok(r.segments.length > 0 && r.segments.every((s) => s.language === 'es'), r.segments.map((s) => s.language).join(','))
})

t.test('given ASR_LANGUAGES=en,es, when German is spoken, then no segment is labelled with a language outside the set', async (t) => {
  const limited = engine(['en', 'es'])
  const r = await limited.transcribe(request(meeting.wav, { speech: meeting.spans }))
  t.ok(r.segments.every((s) => s.language === 'en' || s.language === 'es'), r.segments.map((s) => s.language).join(','))
  t.notOk(r.languages!.includes('de'))
  t.match(plain(within(r, meeting.spans[1]!).map((s) => s.text).join(' ')), /buenos dias|presupuesto/, 'the Spanish turn still in Spanish')
})

// Whisper base hears espeak-ng's French as Polish 0.26, French 0.24, Czech 0.22: among the six
// languages a deployment allows, that is French 0.91. Taken unnormalised, the French turn was
// unsure and went to the majority language (English) and was decoded as English.
t.test('given ASR_LANGUAGES of six languages, when a French voice the model alone hears as Polish follows an English one, then the French turn is French', async (t) => {
  const rec = recording('six', [
    { voice: 'en-us', text: 'Good morning everyone. The budget review is finished and we ship on Friday.' },
    { voice: 'fr', text: "Bonjour à tous, je voudrais parler du budget de l'année prochaine et des nouveaux projets." },
  ])
  const six = engine(['en', 'es', 'de', 'fr', 'pt', 'it'])
  const r = await six.transcribe(request(rec.wav, { speech: rec.spans }))
  const french = within(r, rec.spans[1]!)
  t.ok(french.length > 0 && french.every((s) => s.language === 'fr'), `the French turn labelled fr: ${french.map((s) => s.language).join(',')}`)
  // Base mishears the words of this voice; what matters here is the language they come out in.
  t.equal(detectTextLanguage(french.map((s) => s.text).join(' ')), 'fr', `and decoded as French: ${french.map((s) => s.text).join(' ')}`)
  t.ok(within(r, rec.spans[0]!).every((s) => s.language === 'en'), 'the English turn stays English')
})

t.test('given speech the VAD found (one turn quiet and telephone-band), then every speech range has text, and a tone outside the ranges gives none', async (t) => {
  const rec = recording('ranges', [
    { voice: 'de', text: 'Guten Morgen zusammen.', pause: 2 },
    { voice: 'de', text: 'Wir besprechen heute das Budget für das nächste Jahr.', effects: ['sinc', '300-3400', 'vol', '0.12'], pause: 2 },
    { voice: 'de', text: 'Vielen Dank und bis morgen.', pause: 0.2 },
  ])
  // Three seconds of a steady chord after the speech: no range there.
  const tone = join(tmp.dir, 'tone.wav')
  execFileSync('sox', ['-D', '-n', '-r', '16000', '-b', '16', '-c', '1', tone, 'synth', '3', 'sine', '220', 'sine', '277', 'sine', '330', 'vol', '0.3'])
  const wav = join(tmp.dir, 'ranges-tone.wav')
  execFileSync('sox', ['-D', rec.wav, tone, wav])
  const end = Number(execFileSync('soxi', ['-D', rec.wav]).toString()) * 1000
  const r = await base.transcribe(request(wav, { speech: rec.spans }))
  rec.spans.forEach((span, i) => t.ok(within(r, span).some((s) => s.text.trim() !== ''), `range ${i + 1} has text`))
  t.same(r.segments.filter((s) => s.startMs >= end), [], 'nothing in the tone')
  t.ok(r.segments.every((s) => s.language === 'de'), r.segments.map((s) => `${s.language}: ${s.text}`).join(' | '))
})

t.test('given two speakers in two languages with no pause between them, when the speech ranges say who speaks, then each speaker is heard in their own language', async (t) => {
  const rec = recording('adjacent', [
    { voice: 'en-us', text: 'The budget review is finished and we ship on Friday.', pause: 0.1 },
    { voice: 'es', text: 'La reunión de hoy trata del presupuesto del próximo año.', pause: 0.1 },
  ])
  const speech = rec.spans.map((s, i) => ({ ...s, speaker: i }))
  const r = await base.transcribe(request(rec.wav, { speech }))
  t.ok(within(r, rec.spans[0]!).every((s) => s.language === 'en'), within(r, rec.spans[0]!).map((s) => `${s.language}: ${s.text}`).join(' | '))
  const spanish = r.segments.filter((s) => s.startMs >= rec.spans[1]!.startMs - 200)
  t.ok(spanish.length > 0 && spanish.every((s) => s.language === 'es'), spanish.map((s) => `${s.language}: ${s.text}`).join(' | '))
  t.match(plain(spanish.map((s) => s.text).join(' ')), /presupuesto|proximo ano/)
})

t.test('the service end to end: an upload that switches from English to Spanish is ready with each segment in its language, labelled so, and languagesDetected from the segments', async (t) => {
  const rec = recording('e2e', MEETING.slice(0, 2))
  const mp3 = join(tmp.dir, 'e2e.mp3')
  execFileSync(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-y', '-i', rec.wav, '-c:a', 'libmp3lame', '-b:a', '64k', mp3])
  const web = await startHttpServer({ '/mixed.mp3': { body: readFileSync(mp3), headers: { 'content-type': 'audio/mpeg' } } })
  t.teardown(web.close)
  const s = await testService({ workers: true, env: { IMPORT_ALLOW_HOSTS: '127.0.0.1', JOB_POLL_MS: '20', MODELS_DIR: MODELS, JOB_LEASE_MS: '120000' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/mixed.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId, 300_000)
  t.match(note, { status: 'ready' })
  const tr = (await transcriptOf(s, noteId))!
  const shown = tr.segments.map((x) => `${x.locale} ${x.startMs}: ${x.text}`).join(' | ')
  const english = tr.segments.filter((x) => x.endMs <= rec.spans[0]!.endMs + 300)
  const spanish = tr.segments.filter((x) => x.startMs >= rec.spans[1]!.startMs - 300)
  t.ok(english.length > 0 && english.every((x) => x.locale === 'en'), shown)
  t.ok(spanish.length > 0 && spanish.every((x) => x.locale === 'es'), shown)
  t.match(plain(spanish.map((x) => x.text).join(' ')), /buenos dias|presupuesto/, 'Spanish, not translated')
  t.same([...tr.languagesDetected].sort(), ['en', 'es'])
  t.ok((await audit(s, a.accountId)).result.ok)
})
