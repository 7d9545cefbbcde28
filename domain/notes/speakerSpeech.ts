// Speech ranges cut where the speaker changes, each with its speaker: what recognition gets when
// the diarizer found the turns before it, so it can identify the language per speaker turn.
/** One stretch of one speaker's voice (the diarizer's turn). */
export interface Turn {
  startMs: number
  endMs: number
  speaker: number
}

export interface Range {
  startMs: number
  endMs: number
}

/**
 * The speech ranges, cut at every turn boundary inside them; each piece takes the speaker whose
 * turn covers its middle (where turns overlap, the one that began last: the new voice), and no
 * speaker where no turn does. Neighbouring pieces of one speaker are joined.
 */
export function speechBySpeaker(speech: readonly Range[], turns: readonly Turn[]): (Range & { speaker?: number })[] {
  const out: (Range & { speaker?: number })[] = []
  for (const r of speech) {
    const cuts = new Set<number>([r.startMs, r.endMs])
    for (const t of turns) {
      if (t.startMs > r.startMs && t.startMs < r.endMs) cuts.add(t.startMs)
      if (t.endMs > r.startMs && t.endMs < r.endMs) cuts.add(t.endMs)
    }
    const points = [...cuts].sort((a, b) => a - b)
    for (let i = 0; i + 1 < points.length; i++) {
      const [a, b] = [points[i]!, points[i + 1]!]
      const mid = (a + b) / 2
      const covering = turns.filter((t) => t.startMs <= mid && mid < t.endMs).sort((x, y) => y.startMs - x.startMs)[0]
      const last = out.at(-1)
      if (last && last.endMs === a && last.speaker === covering?.speaker) last.endMs = b
      else out.push(covering ? { startMs: a, endMs: b, speaker: covering.speaker } : { startMs: a, endMs: b })
    }
  }
  return out
}
