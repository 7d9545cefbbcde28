// Word starts from the speech activity: Whisper stretches a word that follows silence back over
// the silence (the first word of a recording starts at 0 ms), so a turn seems to start early by
// the pause before it. A word (or a segment without words) that starts in a pause and ends after
// speech has begun starts where that speech starts; a segment starts with its first word.
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

/** Where [startMs, endMs) should start: unchanged when it starts in speech, else where the first speech inside it starts. */
function speechStart(speech: readonly SpeechRange[], startMs: number, endMs: number): number {
  // The first range that ends after startMs (ranges are ordered and apart).
  let lo = 0
  let hi = speech.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (speech[mid]!.endMs <= startMs) lo = mid + 1
    else hi = mid
  }
  const r = speech[lo]
  if (!r || r.startMs <= startMs || r.startMs >= endMs) return startMs
  return r.startMs
}

export function startsFromSpeech<S extends Timed>(segments: readonly S[], speech: readonly SpeechRange[]): S[] {
  if (speech.length === 0) return [...segments]
  return segments.map((s) => {
    if (!s.words || s.words.length === 0) return { ...s, startMs: speechStart(speech, s.startMs, s.endMs) }
    const words = s.words.map((w) => ({ ...w, startMs: speechStart(speech, w.startMs, w.endMs) }))
    return { ...s, startMs: Math.max(s.startMs, words[0]!.startMs), words }
  })
}
