// How transcription work is shared, with no I/O: which due jobs a worker claims first (fair
// across accounts), and where long audio is cut into chunks (in a pause, so no word is split),
// between which a job yields its turn at the engine to other accounts' jobs.

export interface DueJob {
  id: string
  accountId: string
  dueAt: string
}

/**
 * The order to claim due jobs in: round-robin over accounts, the account with the fewest jobs
 * running (here and in other workers) first, then the job that has waited longest. An account
 * never gets a second job ahead of another account's first.
 */
export function fairOrder(due: readonly DueJob[], runningByAccount: ReadonlyMap<string, number>): DueJob[] {
  const queues = new Map<string, DueJob[]>()
  for (const j of [...due].sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : a.id < b.id ? -1 : 1))) {
    const q = queues.get(j.accountId)
    if (q) q.push(j)
    else queues.set(j.accountId, [j])
  }
  const running = new Map(runningByAccount)
  const out: DueJob[] = []
  while (queues.size > 0) {
    let best: string | null = null
    for (const [account, q] of queues) {
      if (best === null) {
        best = account
        continue
      }
      const n = running.get(account) ?? 0
      const m = running.get(best) ?? 0
      if (n < m || (n === m && q[0]!.dueAt < queues.get(best)![0]!.dueAt)) best = account
    }
    const q = queues.get(best!)!
    out.push(q.shift()!)
    running.set(best!, (running.get(best!) ?? 0) + 1)
    if (q.length === 0) queues.delete(best!)
  }
  return out
}

export interface Span {
  startMs: number
  endMs: number
}

/**
 * Chunks of about `chunkMs` covering [0, totalMs): each cut is moved to the middle of the widest
 * pause between speech ranges within ±20 % of its target, or made at the target when there is
 * none. Audio not much longer than one chunk stays whole.
 */
export function chunkSpans(totalMs: number, chunkMs: number, speech: readonly Span[]): Span[] {
  if (chunkMs <= 0 || totalMs <= chunkMs * 1.25) return [{ startMs: 0, endMs: totalMs }]
  const gaps: Span[] = []
  let last = 0
  for (const r of speech) {
    if (r.startMs > last) gaps.push({ startMs: last, endMs: r.startMs })
    last = Math.max(last, r.endMs)
  }
  if (speech.length > 0 && last < totalMs) gaps.push({ startMs: last, endMs: totalMs })
  const spans: Span[] = []
  let start = 0
  while (totalMs - start > chunkMs * 1.25) {
    const target = start + chunkMs
    const slack = chunkMs * 0.2
    let cut = target
    let widest = 0
    for (const g of gaps) {
      const mid = (g.startMs + g.endMs) / 2
      const width = g.endMs - g.startMs
      const closer = Math.abs(mid - target) < Math.abs(cut - target)
      if (mid > start + chunkMs / 2 && Math.abs(mid - target) <= slack && (width > widest || (width === widest && closer))) {
        widest = width
        cut = mid
      }
    }
    cut = Math.round(cut)
    spans.push({ startMs: start, endMs: cut })
    start = cut
  }
  spans.push({ startMs: start, endMs: totalMs })
  return spans
}
