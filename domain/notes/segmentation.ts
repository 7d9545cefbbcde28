// Where a transcript's segments end: at the end of a sentence or at a pause, never at a fixed
// window. Engines decode in 30-second windows and their segments can run across several sentences
// or stop mid-sentence at a window's edge; with word timings the segments are cut again here.

export interface TimedWord {
  text: string
  startMs: number
  endMs: number
}

export interface WordSegment<W extends TimedWord = TimedWord> {
  startMs: number
  endMs: number
  text: string
  words: W[]
}

export interface SegmentationRules {
  /** A silence at least this long between two words ends a segment. */
  pauseMs: number
  /** A segment longer than this is cut at its longest pause (or at a sentence end inside it). */
  maxMs: number
  /** Sentences shorter than this are joined with the next one when no pause separates them. */
  minMs: number
}

export const DEFAULT_SEGMENTATION: SegmentationRules = { pauseMs: 700, maxMs: 20_000, minMs: 1_200 }

// Sentence-final punctuation of the scripts Whisper writes (Latin, CJK, Devanagari, Arabic...).
const SENTENCE_END = /[.!?…。！？।؟]["'»”)\]]*$/u

const joinText = (words: readonly TimedWord[]) => words.map((w) => w.text).join('').replace(/\s+/g, ' ').trim()

/**
 * Re-cuts word-timed text into segments ending at sentence ends or pauses. The words come in
 * time order (from every engine segment, concatenated); each word keeps its own text, spaces
 * included, as the engine wrote it.
 */
export function segmentWords<W extends TimedWord>(words: readonly W[], rules: SegmentationRules = DEFAULT_SEGMENTATION): WordSegment<W>[] {
  // First cut: after every sentence end and before every pause.
  const pieces: W[][] = []
  let current: W[] = []
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!
    const next = words[i + 1]
    current.push(w)
    const pause = next ? next.startMs - w.endMs : Infinity
    const sentenceEnd = SENTENCE_END.test(w.text.trim())
    if (!next || pause >= rules.pauseMs || sentenceEnd) {
      pieces.push(current)
      current = []
    }
  }
  // Join short sentences that run on without a pause ("Yes. I agree."), up to the maximum.
  const joined: W[][] = []
  for (const piece of pieces) {
    const prev = joined.at(-1)
    if (prev) {
      const gap = piece[0]!.startMs - prev.at(-1)!.endMs
      const prevLength = prev.at(-1)!.endMs - prev[0]!.startMs
      const merged = piece.at(-1)!.endMs - prev[0]!.startMs
      if (gap < rules.pauseMs && prevLength < rules.minMs && merged <= rules.maxMs) {
        prev.push(...piece)
        continue
      }
    }
    joined.push([...piece])
  }
  // A run-on stretch longer than the maximum is cut at its longest gap, again and again.
  const bounded: W[][] = []
  const cut = (ws: W[]) => {
    if (ws.length < 2 || ws.at(-1)!.endMs - ws[0]!.startMs <= rules.maxMs) return void bounded.push(ws)
    let at = 1
    let best = -Infinity
    for (let i = 1; i < ws.length; i++) {
      // Prefer the middle a little so two halves come out, not one word and the rest.
      const gap = ws[i]!.startMs - ws[i - 1]!.endMs
      const comma = /[,;:،、，]$/u.test(ws[i - 1]!.text.trim()) ? 150 : 0
      const balance = Math.min(i, ws.length - i) / ws.length
      const score = gap + comma + balance * 100
      if (score > best) {
        best = score
        at = i
      }
    }
    cut(ws.slice(0, at))
    cut(ws.slice(at))
  }
  for (const ws of joined) cut(ws)
  return bounded
    .map((ws) => ({ startMs: ws[0]!.startMs, endMs: Math.max(ws[0]!.startMs, ws.at(-1)!.endMs), text: joinText(ws), words: ws }))
    .filter((s) => s.text !== '')
}
