// Okapi BM25 (k1 = 1.2, b = 0.75), the ranking the ask features retrieve with. Pure: the
// statistics come from the segment index read model (projections/segmentIndex.ts).

export const K1 = 1.2
export const B = 0.75

/** Robertson-Sparck Jones idf, floored at a small positive value so common terms still count a little. */
export function idf(documents: number, withTerm: number): number {
  return Math.max(0.01, Math.log(1 + (documents - withTerm + 0.5) / (withTerm + 0.5)))
}

/** The BM25 contribution of one term to one document. */
export function termScore(tf: number, docLength: number, avgDocLength: number, termIdf: number): number {
  const norm = K1 * (1 - B + (B * docLength) / Math.max(avgDocLength, 1e-9))
  return termIdf * ((tf * (K1 + 1)) / (tf + norm))
}
