// Speakers onto the recognized speech: each word (or, without word timings, each segment) takes
// the speaker whose labelled windows cover most of it, and a segment is cut where the speaker
// changes between two words, so a turn boundary falls in the pause between them.
import type { RecognizedSegment, RecognizedWord } from '../../ports/speechEngine.ts'

export interface LabelledSpan {
  startMs: number
  endMs: number
  label: number
}

/** The label covering most of [startMs, endMs]; the nearest span's when none overlaps. */
export function labelAt(spans: readonly LabelledSpan[], startMs: number, endMs: number): number | null {
  if (spans.length === 0) return null
  const cover = new Map<number, number>()
  for (const s of spans) {
    const o = Math.min(endMs, s.endMs) - Math.max(startMs, s.startMs)
    if (o > 0) cover.set(s.label, (cover.get(s.label) ?? 0) + o)
  }
  if (cover.size > 0) return [...cover].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0]
  const mid = (startMs + endMs) / 2
  let best = spans[0]!
  let dist = Infinity
  for (const s of spans) {
    const d = mid < s.startMs ? s.startMs - mid : mid > s.endMs ? mid - s.endMs : 0
    if (d < dist) ((dist = d), (best = s))
  }
  return best.label
}

/** A word alone between two words of one other speaker, and short, is taken to be theirs. */
function smooth(labels: (number | null)[], words: readonly RecognizedWord[]): (number | null)[] {
  const out = labels.slice()
  for (let i = 1; i + 1 < out.length; i++) {
    if (out[i - 1] !== null && out[i - 1] === out[i + 1] && out[i] !== out[i - 1] && words[i]!.endMs - words[i]!.startMs < 600) out[i] = out[i - 1]!
  }
  return out
}

const joinWords = (words: readonly RecognizedWord[]) => words.map((w) => w.text.trim()).filter(Boolean).join(' ')

/**
 * The segments with a speaker id each (`1`, `2`, ... in order of first appearance), split at
 * changes; `ids` says which label became which id.
 */
export function labelSegments(segments: readonly RecognizedSegment[], spans: readonly LabelledSpan[]): { segments: RecognizedSegment[]; ids: Map<number, string> } {
  const out: { seg: RecognizedSegment; label: number | null }[] = []
  for (const seg of segments) {
    const words = seg.words?.filter((w) => w.text.trim() !== '') ?? []
    if (words.length < 2) {
      out.push({ seg, label: labelAt(spans, seg.startMs, seg.endMs) })
      continue
    }
    const labels = smooth(
      words.map((w) => labelAt(spans, w.startMs, Math.max(w.endMs, w.startMs + 1))),
      words,
    )
    let from = 0
    for (let i = 1; i <= words.length; i++) {
      if (i < words.length && labels[i] === labels[from]) continue
      const part = words.slice(from, i)
      if (from === 0 && i === words.length) out.push({ seg, label: labels[0]! })
      else
        out.push({
          seg: { ...seg, startMs: from === 0 ? seg.startMs : part[0]!.startMs, endMs: i === words.length ? seg.endMs : part[part.length - 1]!.endMs, text: joinWords(part), words: part },
          label: labels[from]!,
        })
      from = i
    }
  }
  const ids = new Map<number, string>()
  const labelled = out.map(({ seg, label }) => {
    if (label === null) return { ...seg, speaker: null }
    if (!ids.has(label)) ids.set(label, String(ids.size + 1))
    return { ...seg, speaker: ids.get(label)! }
  })
  return { segments: labelled, ids }
}
