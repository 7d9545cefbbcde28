// The local engine's outline: chapters found where the vocabulary changes (TextTiling: lexical
// cohesion between the windows before and after each gap, cut at the deepest valleys), named by
// the key phrases that set each chapter apart from the others. Chapters cover the audio from 0
// to its end, in order, without gaps or overlaps; every boundary is a segment's exact start.
import type { ChapterDraft, SourceTranscript } from '../../ports/languageEngine.ts'
import { audioDurationMs } from '../../domain/language/content.ts'
import { detectLanguage } from '../../domain/languages.ts'
import { fullTextOf } from '../../domain/notes/transcript.ts'
import { AND } from './cues.ts'
import { keyPhrases, phraseSpread } from './keyphrases.ts'
import { clip, sentencesOf, tidy, type Sentence } from './text.ts'

/** About one chapter per this much audio (bounded below and above). */
const CHAPTER_MS = 4 * 60_000
const MAX_CHAPTERS = 15

interface Block {
  firstSegment: number
  startMs: number
  tf: Map<string, number>
}

function cosine(a: Map<string, number>, b: Map<string, number>): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (const [t, x] of a) {
    na += x * x
    const y = b.get(t)
    if (y) dot += x * y
  }
  for (const y of b.values()) nb += y * y
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

const merge = (blocks: readonly Block[]) => {
  const tf = new Map<string, number>()
  for (const b of blocks) for (const [t, n] of b.tf) tf.set(t, (tf.get(t) ?? 0) + n)
  return tf
}

/** Segment indexes where chapters start (the first is always 0). */
export function chapterStarts(sentences: readonly Sentence[], segmentCount: number, durationMs: number, segmentStart: (i: number) => number): number[] {
  const want = Math.max(1, Math.min(MAX_CHAPTERS, Math.round(durationMs / CHAPTER_MS)))
  if (want === 1 || segmentCount < 4) return [0]
  // Blocks of roughly equal time, cut at segment starts.
  const blockMs = Math.max(15_000, Math.min(60_000, durationMs / 60))
  const blocks: Block[] = []
  for (const s of sentences) {
    const last = blocks[blocks.length - 1]
    if (!last || (segmentStart(s.segmentIndex) - last.startMs >= blockMs && s.segmentIndex !== last.firstSegment && !blocks.some((b) => b.firstSegment === s.segmentIndex))) {
      blocks.push({ firstSegment: s.segmentIndex, startMs: segmentStart(s.segmentIndex), tf: new Map() })
    }
    const b = blocks[blocks.length - 1]!
    for (const t of s.terms) b.tf.set(t, (b.tf.get(t) ?? 0) + 1)
  }
  if (blocks.length < 4) return [0]
  const w = Math.max(1, Math.min(4, Math.floor(blocks.length / 6)))
  // Similarity across each gap (gap g lies before block g).
  const sim: number[] = []
  for (let g = 1; g < blocks.length; g++) sim[g] = cosine(merge(blocks.slice(Math.max(0, g - w), g)), merge(blocks.slice(g, g + w)))
  const depth: { gap: number; depth: number }[] = []
  for (let g = 1; g < blocks.length; g++) {
    let left = sim[g]!
    for (let i = g - 1; i >= 1 && sim[i]! >= left; i--) left = sim[i]!
    let right = sim[g]!
    for (let i = g + 1; i < blocks.length && sim[i]! >= right; i++) right = sim[i]!
    depth.push({ gap: g, depth: left - sim[g]! + (right - sim[g]!) })
  }
  // Deepest valleys first, keeping chapters at least half the target length apart.
  const minBlocks = Math.max(1, Math.floor(blocks.length / (2 * want)))
  const chosen: number[] = []
  for (const d of depth.sort((a, b) => b.depth - a.depth || a.gap - b.gap)) {
    if (chosen.length >= want - 1) break
    if (d.gap < minBlocks || blocks.length - d.gap < minBlocks) continue
    if (chosen.some((c) => Math.abs(c - d.gap) < minBlocks)) continue
    chosen.push(d.gap)
  }
  return [0, ...chosen.sort((a, b) => a - b).map((g) => blocks[g]!.firstSegment)]
}

export function outlineLocally(t: SourceTranscript): ChapterDraft[] {
  const segments = t.segments.filter((s) => s.text.trim()).sort((a, b) => a.startMs - b.startMs || a.sequence - b.sequence)
  const durationMs = audioDurationMs(t)
  if (segments.length === 0) return durationMs > 0 ? [{ startMs: 0, endMs: durationMs, headline: clip(t.title, 80) }] : []
  const lang = detectLanguage(fullTextOf(segments), t.language)
  const sentences = sentencesOf(segments)
  const starts = chapterStarts(sentences, segments.length, durationMs, (i) => segments[i]!.startMs)
  const parts = starts.map((first, k) => {
    const next = starts[k + 1] ?? segments.length
    return sentences.filter((s) => s.segmentIndex >= first && s.segmentIndex < next)
  })
  const spread = phraseSpread(parts)
  return starts.map((first, k) => {
    const startMs = k === 0 ? 0 : segments[first]!.startMs
    const endMs = k + 1 < starts.length ? segments[starts[k + 1]!]!.startMs : durationMs
    const phrases = keyPhrases(parts[k]!, { max: 2, lang, ...(starts.length > 1 ? { contrast: { spread, parts: starts.length } } : {}) })
    const headline =
      phrases.length === 0
        ? clip(tidy(parts[k]![0]?.text ?? t.title), 80)
        : tidy(phrases.length === 1 ? phrases[0]!.text : `${phrases[0]!.text} ${AND[lang]} ${phrases[1]!.text}`)
    return { startMs, endMs, headline: clip(headline, 120) }
  })
}
