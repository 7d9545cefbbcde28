// The scores of bench/speech-quality.ts, written out so they can be checked (test/bench.speechMetrics.test.ts):
//
// - WER with jiwer's default normalisation: Unicode NFKC, lower case, punctuation removed (a
//   character that is not a letter, digit, apostrophe or space becomes a space), runs of spaces
//   collapsed, ends stripped, split on spaces; WER = (S + D + I) / reference words.
// - DER as NIST md-eval computes it, on 10 ms frames: missed = Σ max(0, ref − hyp speakers),
//   false alarm = Σ max(0, hyp − ref), confusion = Σ (min(ref, hyp) − correctly mapped), each over
//   the reference speech time; hypothesis speakers are mapped to reference speakers one to one
//   so that the mapped overlap is largest; frames within the collar (250 ms) of a reference turn's
//   start or end are not scored. Overlapping reference speech counts once per speaker.
// - Word boundaries: reference and hypothesis words aligned (Levenshtein on normalised words),
//   and for each word that matches, |start − start| and |end − end| in ms.

export function normalizeWords(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)
}

/** Edit operations aligning hyp to ref: pairs [refIndex | null, hypIndex | null]. */
export function align(ref: readonly string[], hyp: readonly string[]): { errors: number; pairs: [number | null, number | null][] } {
  const n = ref.length
  const m = hyp.length
  const d = Array.from({ length: n + 1 }, (_, i) => Int32Array.from({ length: m + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= n; i++)
    for (let j = 1; j <= m; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1))
  const pairs: [number | null, number | null][] = []
  let i = n
  let j = m
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0 && d[i]![j] === d[i - 1]![j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1)) pairs.push([--i, --j])
    else if (i > 0 && d[i]![j] === d[i - 1]![j]! + 1) pairs.push([--i, null])
    else pairs.push([null, --j])
  }
  return { errors: d[n]![m]!, pairs: pairs.reverse() }
}

export function wordErrors(reference: string, hypothesis: string): { errors: number; words: number } {
  const ref = normalizeWords(reference)
  return { errors: align(ref, normalizeWords(hypothesis)).errors, words: ref.length }
}

export interface Turn {
  startMs: number
  endMs: number
  speaker: string
}

export interface Der {
  scoredMs: number
  missedMs: number
  falseAlarmMs: number
  confusionMs: number
}

const FRAME = 10

function permutations<T>(items: readonly T[], k: number): T[][] {
  if (k === 0) return [[]]
  const out: T[][] = []
  items.forEach((x, i) => {
    for (const rest of permutations([...items.slice(0, i), ...items.slice(i + 1)], k - 1)) out.push([x, ...rest])
  })
  return out
}

export function diarizationError(reference: readonly Turn[], hypothesis: readonly Turn[], collarMs = 250): Der & { mapping: Map<string, string> } {
  const end = Math.max(0, ...reference.map((t) => t.endMs), ...hypothesis.map((t) => t.endMs))
  const frames = Math.ceil(end / FRAME)
  const refSpk = [...new Set(reference.map((t) => t.speaker))]
  const hypSpk = [...new Set(hypothesis.map((t) => t.speaker))]
  const active = (turns: readonly Turn[], names: string[]) => {
    const on = names.map(() => new Uint8Array(frames))
    for (const t of turns) {
      const row = on[names.indexOf(t.speaker)]!
      for (let f = Math.floor(t.startMs / FRAME); f < Math.min(frames, Math.ceil(t.endMs / FRAME)); f++) row[f] = 1
    }
    return on
  }
  const ref = active(reference, refSpk)
  const hyp = active(hypothesis, hypSpk)
  const scored = new Uint8Array(frames).fill(1)
  for (const t of reference) {
    for (const edge of [t.startMs, t.endMs]) {
      for (let f = Math.max(0, Math.floor((edge - collarMs) / FRAME)); f < Math.min(frames, Math.ceil((edge + collarMs) / FRAME)); f++) scored[f] = 0
    }
  }
  // Overlap between each reference and hypothesis speaker, over scored frames.
  const overlap = refSpk.map((_, r) => hypSpk.map((_, h) => {
    let n = 0
    for (let f = 0; f < frames; f++) if (scored[f] && ref[r]![f] && hyp[h]![f]) n++
    return n
  }))
  // The one-to-one mapping with the largest total overlap (few speakers: try every assignment).
  const best: (number | null)[] = refSpk.map(() => null)
  let bestTotal = -1
  const refIdx = refSpk.map((_, i) => i)
  const hypIdx = hypSpk.map((_, i) => i)
  const pairings: [number, number][][] =
    refSpk.length <= hypSpk.length
      ? permutations(hypIdx, refSpk.length).map((hs) => refIdx.map((r, i) => [r, hs[i]!] as [number, number]))
      : permutations(refIdx, hypSpk.length).map((rs) => hypIdx.map((h, i) => [rs[i]!, h] as [number, number]))
  for (const pairing of pairings) {
    const total = pairing.reduce((n, [r, h]) => n + overlap[r]![h]!, 0)
    if (total > bestTotal) {
      bestTotal = total
      best.fill(null)
      for (const [r, h] of pairing) best[r] = h
    }
  }
  let scoredMs = 0
  let missedMs = 0
  let falseAlarmMs = 0
  let confusionMs = 0
  for (let f = 0; f < frames; f++) {
    if (!scored[f]) continue
    let nRef = 0
    let nHyp = 0
    let correct = 0
    for (let r = 0; r < refSpk.length; r++) {
      if (!ref[r]![f]) continue
      nRef++
      const h = best[r]
      if (h !== null && h !== undefined && hyp[h]![f]) correct++
    }
    for (let h = 0; h < hypSpk.length; h++) if (hyp[h]![f]) nHyp++
    scoredMs += nRef * FRAME
    missedMs += Math.max(0, nRef - nHyp) * FRAME
    falseAlarmMs += Math.max(0, nHyp - nRef) * FRAME
    confusionMs += (Math.min(nRef, nHyp) - correct) * FRAME
  }
  const mapping = new Map<string, string>()
  best.forEach((h, r) => h !== null && h !== undefined && mapping.set(hypSpk[h]!, refSpk[r]!))
  return { scoredMs, missedMs, falseAlarmMs, confusionMs, mapping }
}

/**
 * Word-level attribution: of the recognized words whose middle lies in exactly one reference turn,
 * the share whose speaker, mapped to a reference speaker as the DER mapping does, is that turn's.
 */
export function wordAttribution(reference: readonly Turn[], words: readonly Turn[], mapping: ReadonlyMap<string, string>): { correct: number; scored: number } {
  let correct = 0
  let scored = 0
  for (const w of words) {
    const mid = (w.startMs + w.endMs) / 2
    const covering = reference.filter((t) => t.startMs <= mid && mid < t.endMs)
    if (covering.length !== 1) continue
    scored++
    if (mapping.get(w.speaker) === covering[0]!.speaker) correct++
  }
  return { correct, scored }
}

/** The turns no recognized word lies in (its middle inside the turn, ends included): speech dropped. */
export function turnsWithoutWords<T extends { startMs: number; endMs: number }>(turns: readonly T[], words: readonly { startMs: number; endMs: number }[]): T[] {
  const mids = words.map((w) => (w.startMs + w.endMs) / 2)
  return turns.filter((t) => !mids.some((m) => m >= t.startMs && m <= t.endMs))
}

export interface TimedWord {
  text: string
  startMs: number
  endMs: number
}

/** Start and end errors (ms) of the hypothesis words that match a reference word. */
export function boundaryErrors(reference: readonly TimedWord[], hypothesis: readonly TimedWord[]): number[] {
  const norm = (w: TimedWord) => normalizeWords(w.text).join(' ')
  const ref = reference.map(norm)
  const hypWords = hypothesis.filter((w) => norm(w) !== '')
  const { pairs } = align(ref, hypWords.map(norm))
  const out: number[] = []
  for (const [r, h] of pairs) {
    if (r === null || h === null || ref[r] !== norm(hypWords[h]!)) continue
    out.push(Math.abs(hypWords[h]!.startMs - reference[r]!.startMs), Math.abs(hypWords[h]!.endMs - reference[r]!.endMs))
  }
  return out
}
