// Word starts from the speech activity: Whisper stretches a word that follows silence back over
// the silence (the first word of a recording starts at 0 ms), so a turn seems to start early by
// the pause before it. A word whose start lies outside the speech and whose end lies inside it
// starts where that speech starts; a segment starts with its first word.
import type { Word } from './transcript.ts'

export interface SpeechRange {
  startMs: number
  endMs: number
}

interface Timed {
  startMs: number
  endMs: number
  words: Word[] | null
}

/** The range holding `ms`, by binary search over ordered ranges; null in a pause. */
function rangeAt(speech: readonly SpeechRange[], ms: number): SpeechRange | null {
  let lo = 0
  let hi = speech.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const r = speech[mid]!
    if (ms < r.startMs) hi = mid - 1
    else if (ms > r.endMs) lo = mid + 1
    else return r
  }
  return null
}

export function startsFromSpeech<S extends Timed>(segments: readonly S[], speech: readonly SpeechRange[]): S[] {
  if (speech.length === 0) return [...segments]
  return segments.map((s) => {
    if (!s.words || s.words.length === 0) {
      const r = rangeAt(speech, s.endMs)
      return r && s.startMs < r.startMs && rangeAt(speech, s.startMs) === null ? { ...s, startMs: r.startMs } : s
    }
    const words = s.words.map((w) => {
      if (rangeAt(speech, w.startMs)) return w
      const r = rangeAt(speech, w.endMs)
      return r && r.startMs > w.startMs && r.startMs < w.endMs ? { ...w, startMs: r.startMs } : w
    })
    return { ...s, startMs: Math.max(s.startMs, words[0]!.startMs), words }
  })
}
