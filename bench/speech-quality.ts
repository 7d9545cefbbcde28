// Speech quality on a corpus whose truth is known because it is assembled here:
//
// - dialogues in en, es, de, fr, pt and it of 2–5 distinct synthetic voices (espeak-ng variants,
//   and flite's English voices when installed), each voice changed with sox (pitch in cents,
//   tempo), turns of one or two sentences with pauses, a quarter of the turns overlapping the
//   previous one by 0.8–1.6 s and every other dialogue under white noise (20 dB SNR); the turn
//   boundaries are where the audio was placed;
// - word-timing clips: a sentence synthesized one word at a time and joined with known gaps, so
//   every word's start and end is known.
//
// Each clip goes through what the service runs: the default local engine (faster-whisper,
// Whisper base, int8, greedy; ASR_ENGINE=whisper for whisper.cpp on WHISPER_MODEL_PATH), non-speech
// tags removed, the local diarizer. Printed per part (`tuning`, the only one
// settings were chosen on, and `heldout`, other sentences, voices and seed): WER per language,
// DER (missed, false alarm, confusion; 250 ms collar) of the whole system and of the diarizer
// alone on the reference turns, speaker-count accuracy, word-boundary error (median, p90), and
// the CPU cost of diarization per audio minute next to recognition's (the baseline, same run).
//
// Synthetic voices are easier than people: clean, steady, distinct, without accents, hesitations
// or crosstalk. These figures are an upper bound for real meetings, and a regression check.
//
//   npx tsx bench/speech-quality.ts            WHISPER_MODEL (default base), MODELS_DIR (default .ci/models),
//                                              ASR_ENGINE=whisper + WHISPER_MODEL_PATH (whisper.cpp, ggml),
//   DIALOGUES=1 (per language and part)        SPEAKER_EMBEDDING_MODEL (default .ci/models/…pt), TUNE=1 (threshold sweep, tuning part only)
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { whisperCppEngine } from '../adapters/whisper/whisperCpp.ts'
import { fasterWhisperEngine } from '../adapters/ctranslate2/fasterWhisper.ts'
import { loadGe2eEncoder } from '../adapters/ge2e/speakerEncoder.ts'
import { fetchSpeakerModel, SPEAKER_MODEL_FILE } from '../adapters/ge2e/resemblyzerModel.ts'
import { ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'
import { readWav, wavFromPcm } from '../domain/audio/pcm.ts'
import { LocalDiarizer, DEFAULT_DIARIZATION_THRESHOLD } from '../engines/diarization/diarizer.ts'
import { withoutNonSpeech } from '../domain/notes/nonSpeech.ts'
import type { RecognizedSegment } from '../ports/speechEngine.ts'
import { LANGUAGES, TEXTS, type Lang } from './speechTexts.ts'
import { boundaryErrors, diarizationError, wordErrors, type Der, type TimedWord, type Turn } from './speechMetrics.ts'
import { envInt, machine, machineLoad, percentile, table, tempDir } from './lib.ts'

const SR = 16_000
const WHISPER_CPP = process.env.ASR_ENGINE === 'whisper'
const MODEL = WHISPER_CPP ? (process.env.WHISPER_MODEL_PATH ?? join('.ci', 'models', 'ggml-tiny.en.bin')) : (process.env.WHISPER_MODEL || 'base')
const MODELS_DIR = process.env.MODELS_DIR || join('.ci', 'models')
const SPEAKER_MODEL = process.env.SPEAKER_EMBEDDING_MODEL ?? fetchSpeakerModel(join('.ci', 'models', SPEAKER_MODEL_FILE))
const DIALOGUES = envInt('DIALOGUES', 1)
/** ASR=0: no recognition (minutes of CPU with Whisper); only the diarizer on the reference turns is scored. */
const ASR = process.env.ASR !== '0'
const tmp = tempDir('speech')

// ---- voices -------------------------------------------------------------------------------------

interface Voice {
  name: string
  synth: 'espeak' | 'flite'
  /** espeak-ng variant (`m3`, `f2`, ...) or flite voice. */
  voice: string
  /** sox pitch shift (cents) and tempo factor. */
  cents: number
  tempo: number
}

const hasFlite = (() => {
  try {
    execFileSync('flite', ['-lv'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

/** Voices of a part: the two parts share none. */
const VOICES: Record<'tuning' | 'heldout', { espeak: string[]; flite: string[] }> = {
  tuning: { espeak: ['m1', 'f3', 'm3', 'f1', 'm7', 'f5'], flite: ['kal16', 'slt'] },
  heldout: { espeak: ['m2', 'f2', 'm4', 'f4', 'm6', 'klatt3'], flite: ['awb', 'rms'] },
}
const CENTS = [0, 350, -250, 600, -450]
const TEMPI = [1, 1.12, 0.9, 1.2, 0.95]

/** A small seeded generator, so a part is the same corpus on every run. */
function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

function pickVoices(part: 'tuning' | 'heldout', lang: Lang, n: number, rand: () => number): Voice[] {
  const pool = VOICES[part]
  const out: Voice[] = []
  const espeak = [...pool.espeak].sort(() => rand() - 0.5)
  const flite = lang === 'en' && hasFlite ? [...pool.flite] : []
  for (let i = 0; i < n; i++) {
    const useFlite = flite.length > 0 && i % 2 === 1
    const voice = useFlite ? flite.shift()! : espeak[i % espeak.length]!
    out.push({ name: `${useFlite ? 'flite' : 'espeak'}:${voice}/${CENTS[i]}c/${TEMPI[i]}x`, synth: useFlite ? 'flite' : 'espeak', voice, cents: CENTS[i]!, tempo: TEMPI[i]! })
  }
  return out
}

let counter = 0
/** 16 kHz mono samples of `text` in `voice`, leading and trailing silence trimmed. */
function say(lang: Lang, voice: Voice, text: string): Float32Array {
  const raw = join(tmp.dir, `raw-${counter}.wav`)
  const out = join(tmp.dir, `v-${counter++}.wav`)
  if (voice.synth === 'flite') execFileSync('flite', ['-voice', voice.voice, '-t', text, '-o', raw])
  else execFileSync('espeak-ng', ['-v', `${lang}+${voice.voice}`, '-w', raw, text])
  execFileSync('sox', [raw, '-r', String(SR), '-c', '1', '-b', '16', out, 'pitch', String(voice.cents), 'tempo', String(voice.tempo)])
  const pcm = readWav(readFileSync(out))!.samples
  let a = 0
  let b = pcm.length
  while (a < b && Math.abs(pcm[a]!) < 0.01) a++
  while (b > a && Math.abs(pcm[b - 1]!) < 0.01) b--
  return pcm.slice(a, b)
}

// ---- corpus -------------------------------------------------------------------------------------

interface Clip {
  lang: Lang
  kind: 'dialogue' | 'words'
  samples: Float32Array
  text: string
  turns: Turn[]
  speakers: number
  words: TimedWord[]
  noisy: boolean
}

function dialogue(part: 'tuning' | 'heldout', lang: Lang, speakers: number, noisy: boolean, rand: () => number): Clip {
  const voices = pickVoices(part, lang, speakers, rand)
  const sentences = TEXTS[part][lang]
  const turnCount = Math.max(4, speakers + 2)
  const pieces: { at: number; samples: Float32Array; speaker: number; text: string }[] = []
  let at = Math.round(0.4 * SR)
  let prev = -1
  let prevStart = 0
  for (let i = 0; i < turnCount; i++) {
    // Everyone speaks at least once; then anyone but the last speaker.
    let speaker = i < speakers ? i : Math.floor(rand() * speakers)
    if (speaker === prev) speaker = (speaker + 1) % speakers
    const long = rand() < 0.35
    const text = Array.from({ length: long ? 2 : 1 }, () => sentences[Math.floor(rand() * sentences.length)]!).join(' ')
    const samples = say(lang, voices[speaker]!, text)
    let start = at + Math.round((0.15 + rand() * 0.75) * SR)
    // Some turns start 0.8–1.6 s before the previous one ends (overlap longer than the two
    // collars around it, so it is scored), never before the previous turn's first second.
    if (i > 0 && rand() < 0.25) start = Math.max(prevStart + SR, at - Math.round((0.8 + rand() * 0.8) * SR))
    pieces.push({ at: start, samples, speaker, text })
    prevStart = start
    at = Math.max(at, start + samples.length)
    prev = speaker
  }
  const mix = new Float32Array(at + Math.round(0.5 * SR))
  for (const p of pieces) for (let i = 0; i < p.samples.length; i++) mix[p.at + i]! += p.samples[i]!
  if (noisy) addNoise(mix, 20, rand)
  return {
    lang,
    kind: 'dialogue',
    samples: mix,
    text: pieces.map((p) => p.text).join(' '),
    turns: pieces.map((p) => ({ startMs: (p.at / SR) * 1000, endMs: ((p.at + p.samples.length) / SR) * 1000, speaker: String(p.speaker) })),
    speakers,
    words: [],
    noisy,
  }
}

/** White noise at `snrDb` below the speech's RMS. */
function addNoise(x: Float32Array, snrDb: number, rand: () => number) {
  let ms = 0
  let n = 0
  for (const v of x) if (Math.abs(v) > 0.01) ((ms += v * v), n++)
  const rms = Math.sqrt(ms / Math.max(1, n)) / 10 ** (snrDb / 20)
  for (let i = 0; i < x.length; i++) x[i]! += (rand() * 2 - 1) * rms * Math.sqrt(3)
}

function wordClip(part: 'tuning' | 'heldout', lang: Lang, rand: () => number): Clip {
  const voice = pickVoices(part, lang, 1, rand)[0]!
  const sentence = TEXTS[part][lang][Math.floor(rand() * 8)]!
  const tokens = sentence.split(/\s+/)
  const pieces: Float32Array[] = []
  const words: TimedWord[] = []
  let at = Math.round(0.3 * SR)
  for (const token of tokens) {
    const samples = say(lang, voice, token)
    words.push({ text: token, startMs: (at / SR) * 1000, endMs: ((at + samples.length) / SR) * 1000 })
    pieces.push(samples)
    at += samples.length + Math.round((0.06 + rand() * 0.19) * SR)
  }
  const out = new Float32Array(at + Math.round(0.4 * SR))
  pieces.forEach((p, i) => out.set(p, Math.round((words[i]!.startMs / 1000) * SR)))
  return { lang, kind: 'words', samples: out, text: sentence, turns: [{ startMs: words[0]!.startMs, endMs: words.at(-1)!.endMs, speaker: '0' }], speakers: 1, words, noisy: false }
}

function corpus(part: 'tuning' | 'heldout'): Clip[] {
  const rand = rng(part === 'tuning' ? 1 : 2)
  const clips: Clip[] = []
  LANGUAGES.forEach((lang, li) => {
    for (let d = 0; d < DIALOGUES; d++) clips.push(dialogue(part, lang, 2 + ((li + d) % 4), (li + d) % 2 === 1, rand))
    clips.push(wordClip(part, lang, rand))
  })
  return clips
}

function wavOf(samples: Float32Array, path: string) {
  const data = Buffer.alloc(samples.length * 2)
  for (let i = 0; i < samples.length; i++) data.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), i * 2)
  writeFileSync(path, wavFromPcm(data, SR))
}

// ---- run ----------------------------------------------------------------------------------------

const threads = envInt('WHISPER_THREADS', 2)
const engine = WHISPER_CPP
  ? whisperCppEngine({ modelPath: MODEL, threads })
  : fasterWhisperEngine({ model: MODEL, modelsDir: MODELS_DIR, python: process.env.ASR_PYTHON || 'python3', threads, computeType: 'int8', beamSize: 1 })
const encoder = loadGe2eEncoder(SPEAKER_MODEL, ffmpegPath())

interface Result {
  clip: Clip
  wav: string
  recognized: RecognizedSegment[]
  asrMs: number
  /** CPU time of the process during recognition (all of whisper.cpp's threads). */
  asrCpuMs: number
}

/**
 * CPU milliseconds (user + system) of this process and its live children (faster-whisper runs in
 * a Python child) since `from`, read from /proc: the children's time is not in process.cpuUsage.
 */
const CLK_TCK = 100
function cpuNow(): number {
  const u = process.cpuUsage()
  let ms = (u.user + u.system) / 1000
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      if (Number(f[1]) === process.pid) ms += ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK
    } catch {
      // the process ended while we looked
    }
  }
  return ms
}
const cpuSince = (from: number) => cpuNow() - from

const turnsOf = (segments: readonly RecognizedSegment[]): Turn[] => segments.filter((s) => s.speaker !== null).map((s) => ({ startMs: s.startMs, endMs: s.endMs, speaker: s.speaker! }))
const addDer = (a: Der, b: Der): Der => ({ scoredMs: a.scoredMs + b.scoredMs, missedMs: a.missedMs + b.missedMs, falseAlarmMs: a.falseAlarmMs + b.falseAlarmMs, confusionMs: a.confusionMs + b.confusionMs })
const ZERO: Der = { scoredMs: 0, missedMs: 0, falseAlarmMs: 0, confusionMs: 0 }
const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)} %`)

async function recognize(part: string, clips: Clip[]): Promise<Result[]> {
  const out: Result[] = []
  for (const [i, clip] of clips.entries()) {
    const wav = join(tmp.dir, `${part}-${i}.wav`)
    wavOf(clip.samples, wav)
    const t0 = performance.now()
    const c0 = cpuNow()
    const r = ASR ? await engine.transcribe({ wavPath: wav, durationSeconds: clip.samples.length / SR, language: null, workDir: tmp.dir }) : { segments: [] }
    out.push({ clip, wav, recognized: withoutNonSpeech(r.segments), asrMs: performance.now() - t0, asrCpuMs: cpuSince(c0) })
    process.stderr.write(`  ${part} ${i + 1}/${clips.length} ${clip.lang} ${clip.kind} ${(clip.samples.length / SR).toFixed(1)} s\n`)
  }
  return out
}

async function score(part: string, results: Result[], threshold: number, print: boolean) {
  const diarizer = new LocalDiarizer(encoder, { threshold })
  let sys = ZERO
  let oracle = ZERO
  let countRight = 0
  let dialogues = 0
  let diarMs = 0
  let refDiarMs = 0
  let diarCpuMs = 0
  let refDiarCpuMs = 0
  let asrCpuMs = 0
  let asrMs = 0
  let audioMs = 0
  const wer = new Map<Lang, { errors: number; words: number }>()
  const bounds: number[] = []
  let wordsSeen = false
  const rows: (string | number)[][] = []
  for (const r of results) {
    const { clip } = r
    const hyp = r.recognized.map((s) => s.text).join(' ')
    const w = wordErrors(clip.text, hyp)
    const acc = wer.get(clip.lang) ?? { errors: 0, words: 0 }
    wer.set(clip.lang, { errors: acc.errors + w.errors, words: acc.words + w.words })
    if (clip.kind === 'words') {
      const words = r.recognized.flatMap((s) => s.words ?? [])
      if (words.length > 0) wordsSeen = true
      bounds.push(...boundaryErrors(clip.words, words))
      continue
    }
    dialogues++
    audioMs += (clip.samples.length / SR) * 1000
    asrMs += r.asrMs
    asrCpuMs += r.asrCpuMs
    const t0 = performance.now()
    const c0 = cpuNow()
    const d = await diarizer.diarize({ wavPath: r.wav, segments: r.recognized, speakers: null })
    diarMs += performance.now() - t0
    diarCpuMs += cpuSince(c0)
    const der = diarizationError(clip.turns, turnsOf(d.segments))
    sys = addDer(sys, der)
    // The diarizer alone: the reference turns as the recognized segments (no words).
    const ref = clip.turns.map((t) => ({ startMs: t.startMs, endMs: t.endMs, text: 'x', speaker: null, confidence: null, words: null }))
    const t1 = performance.now()
    const c1 = cpuNow()
    const o = await diarizer.diarize({ wavPath: r.wav, segments: ref, speakers: null })
    refDiarMs += performance.now() - t1
    refDiarCpuMs += cpuSince(c1)
    const oDer = diarizationError(clip.turns, turnsOf(o.segments))
    oracle = addDer(oracle, oDer)
    if ((ASR ? d : o).speakerCount === clip.speakers) countRight++
    rows.push([clip.lang, clip.speakers, ASR ? d.speakerCount : '–', o.speakerCount, clip.noisy ? 'yes' : 'no', (clip.samples.length / SR).toFixed(1), ASR ? pct(der.missedMs + der.falseAlarmMs + der.confusionMs, der.scoredMs) : '–', pct(oDer.missedMs + oDer.falseAlarmMs + oDer.confusionMs, oDer.scoredMs)])
  }
  const derOf = (d: Der) => pct(d.missedMs + d.falseAlarmMs + d.confusionMs, d.scoredMs)
  if (print) {
    console.log(`\n### ${part}\n`)
    if (ASR) {
      table(['language', 'ref words', 'WER'], [...wer].map(([l, w]) => [l, w.words, pct(w.errors, w.words)]))
      console.log()
    }
    table(['lang', 'speakers', 'found', 'found (ref turns)', 'noise', 'seconds', 'DER', 'DER (ref turns)'], rows)
    console.log()
    table(
      ['DER (collar 250 ms)', 'total', 'missed', 'false alarm', 'confusion'],
      [
        ...(ASR ? [['system (Whisper segments)', derOf(sys), pct(sys.missedMs, sys.scoredMs), pct(sys.falseAlarmMs, sys.scoredMs), pct(sys.confusionMs, sys.scoredMs)]] : []),
        ['diarizer on reference turns', derOf(oracle), pct(oracle.missedMs, oracle.scoredMs), pct(oracle.falseAlarmMs, oracle.scoredMs), pct(oracle.confusionMs, oracle.scoredMs)],
      ],
    )
    console.log(`\nspeaker count right${ASR ? '' : ' (reference turns)'}: ${countRight}/${dialogues}`)
    console.log(
      !ASR
        ? 'WER, system DER, word boundaries: not measured (ASR=0)'
        : wordsSeen
        ? `word-boundary error: median ${percentile(bounds, 50).toFixed(0)} ms, p90 ${percentile(bounds, 90).toFixed(0)} ms (${bounds.length / 2} matched words, start and end each)`
        : 'word-boundary error: n/a (the engine gave no word timings)',
    )
    const minutes = audioMs / 60_000
    const perMin = (ms: number) => `${(ms / 1000 / minutes).toFixed(2)} s`
    console.log(
      ASR
        ? `cost per audio minute (CPU time; wall time in brackets): recognition ${perMin(asrCpuMs)} (${perMin(asrMs)}) — the baseline; diarization ${perMin(diarCpuMs)} (${perMin(diarMs)}) = ${((100 * diarCpuMs) / asrCpuMs).toFixed(1)} % of recognition's CPU time; on reference turns ${perMin(refDiarCpuMs)} (${perMin(refDiarMs)}); ${(audioMs / 1000).toFixed(0)} s of dialogue`
        : `cost per audio minute (CPU time; wall time in brackets): diarization on reference turns ${perMin(refDiarCpuMs)} (${perMin(refDiarMs)}); recognition not run; ${(audioMs / 1000).toFixed(0)} s of dialogue`,
    )
  }
  return { sys, oracle, countRight, dialogues }
}

console.log(`# speech quality — ${new Date().toISOString()}`)
console.log(`${machine()}; at start: ${machineLoad()}`)
console.log(`recognition: ${WHISPER_CPP ? 'whisper.cpp' : 'faster-whisper int8 greedy'} ${MODEL}; diarizer: ${encoder.model}, threshold ${DEFAULT_DIARIZATION_THRESHOLD}; voices: espeak-ng${hasFlite ? ' + flite (English)' : ''}, sox pitch/tempo`)
console.log('WER normalisation (jiwer default): NFKC, lower case, punctuation → space, spaces collapsed. DER: md-eval rules, 250 ms collar, overlap scored per speaker.')
console.log('Synthetic voices are easier than people: clean, steady and distinct. Read these as an upper bound.')
for (const part of ['tuning', 'heldout'] as const) {
  process.stderr.write(`building the ${part} corpus...\n`)
  const clips = corpus(part)
  const results = await recognize(part, clips)
  await score(part, results, DEFAULT_DIARIZATION_THRESHOLD, true)
  if (process.env.TUNE && part === 'tuning') {
    console.log('\nthreshold sweep (tuning part only):')
    const rows: (string | number)[][] = []
    for (const th of [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]) {
      const s = await score(part, results, th, false)
      rows.push([th, ASR ? pct(s.sys.missedMs + s.sys.falseAlarmMs + s.sys.confusionMs, s.sys.scoredMs) : '–', pct(s.oracle.missedMs + s.oracle.falseAlarmMs + s.oracle.confusionMs, s.oracle.scoredMs), `${s.countRight}/${s.dialogues}`])
    }
    table(['threshold', 'DER system', 'DER ref turns', 'count right'], rows)
  }
}
console.log(`\nat end: ${machineLoad()}`)
await engine.close?.()
