// Speaker clustering of window embeddings: agglomerative, average linkage on cosine similarity
// (each window weighted by its seconds of speech). Without a hint the merging stops when the two
// closest clusters are less similar than the threshold, so the number of speakers is found; with
// a hint it stops at that number. Then every window goes to the nearest centroid (one pass of
// k-means), and, without a hint, clusters with too little speech to be a person join their
// nearest neighbour.

export interface ClusterOptions {
  /** The number of speakers when known; null to find it. */
  k: number | null
  /** Lowest average cosine similarity at which two clusters are one speaker. */
  threshold: number
  /** Seconds of speech per vector (default 1 each). */
  weights?: readonly number[]
  /** Without a hint, a cluster with less speech than this (seconds) is not a speaker of its own. */
  minSeconds?: number
}

const cosine = (a: Float32Array, b: Float32Array) => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}

/** A cluster index per vector, numbered in order of first appearance. */
export function clusterVectors(vectors: readonly Float32Array[], options: ClusterOptions): number[] {
  const n = vectors.length
  if (n === 0) return []
  const w = options.weights ? [...options.weights] : vectors.map(() => 1)
  const target = options.k === null ? 1 : Math.max(1, Math.min(options.k, n))
  const sim = new Float32Array(n * n)
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) sim[i * n + j] = sim[j * n + i] = cosine(vectors[i]!, vectors[j]!)
  const active = new Uint8Array(n).fill(1)
  const owner = Array.from({ length: n }, (_, i) => i)
  // Each row's best partner, kept up to date so a merge costs O(n) instead of a full search.
  const best = new Int32Array(n)
  const bestSim = new Float32Array(n)
  const refresh = (i: number) => {
    let bj = -1
    let bs = -Infinity
    for (let j = 0; j < n; j++) {
      if (j === i || !active[j]) continue
      const s = sim[i * n + j]!
      if (s > bs) ((bs = s), (bj = j))
    }
    best[i] = bj
    bestSim[i] = bs
  }
  for (let i = 0; i < n; i++) refresh(i)
  let clusters = n
  while (clusters > target) {
    let a = -1
    let s = -Infinity
    for (let i = 0; i < n; i++) if (active[i] && best[i]! >= 0 && bestSim[i]! > s) ((s = bestSim[i]!), (a = i))
    if (a < 0 || (options.k === null && s < options.threshold)) break
    const b = best[a]!
    // Average linkage (Lance–Williams): the merged cluster's similarity to k is the weighted mean.
    const wa = w[a]!
    const wb = w[b]!
    for (let k = 0; k < n; k++) {
      if (!active[k] || k === a || k === b) continue
      const v = (wa * sim[a * n + k]! + wb * sim[b * n + k]!) / (wa + wb)
      sim[a * n + k] = sim[k * n + a] = v
    }
    w[a] = wa + wb
    active[b] = 0
    for (let i = 0; i < n; i++) if (owner[i] === b) owner[i] = a
    clusters--
    for (let k = 0; k < n; k++) {
      if (!active[k]) continue
      if (k === a || best[k] === a || best[k] === b) refresh(k)
      else if (sim[k * n + a]! > bestSim[k]!) ((best[k] = a), (bestSim[k] = sim[k * n + a]!))
    }
  }
  let labels = owner.slice()
  labels = reassign(vectors, labels, options.weights)
  if (options.k === null && (options.minSeconds ?? 0) > 0) labels = absorbSmall(vectors, labels, options.weights, options.minSeconds!)
  return renumber(labels)
}

function centroids(vectors: readonly Float32Array[], labels: readonly number[], weights: readonly number[] | undefined): Map<number, Float32Array> {
  const sums = new Map<number, Float32Array>()
  labels.forEach((l, i) => {
    const v = vectors[i]!
    const s = sums.get(l) ?? new Float32Array(v.length)
    const wi = weights?.[i] ?? 1
    for (let d = 0; d < v.length; d++) s[d]! += wi * v[d]!
    sums.set(l, s)
  })
  for (const s of sums.values()) {
    const norm = Math.sqrt(s.reduce((a, x) => a + x * x, 0)) || 1
    for (let d = 0; d < s.length; d++) s[d]! /= norm
  }
  return sums
}

const nearest = (v: Float32Array, cs: Map<number, Float32Array>, except?: number) => {
  let bl = -1
  let bs = -Infinity
  for (const [l, c] of cs) {
    if (l === except) continue
    const s = cosine(v, c)
    if (s > bs) ((bs = s), (bl = l))
  }
  return bl
}

/** One k-means pass: windows the merging order left on the wrong side go to the nearest centroid. */
function reassign(vectors: readonly Float32Array[], labels: number[], weights: readonly number[] | undefined): number[] {
  const cs = centroids(vectors, labels, weights)
  if (cs.size < 2) return labels
  return vectors.map((v) => nearest(v, cs))
}

function absorbSmall(vectors: readonly Float32Array[], labels: number[], weights: readonly number[] | undefined, minSeconds: number): number[] {
  let out = labels.slice()
  for (;;) {
    const seconds = new Map<number, number>()
    out.forEach((l, i) => seconds.set(l, (seconds.get(l) ?? 0) + (weights?.[i] ?? 1)))
    if (seconds.size < 2) return out
    const [small] = [...seconds].filter(([, s]) => s < minSeconds).sort((a, b) => a[1] - b[1])
    if (!small) return out
    const cs = centroids(vectors, out, weights)
    const members = out.map((l, i) => (l === small[0] ? i : -1)).filter((i) => i >= 0)
    // The small cluster joins the speaker its centroid resembles most.
    const into = nearest(cs.get(small[0])!, cs, small[0])
    for (const i of members) out[i] = into
    out = out.slice()
  }
}

function renumber(labels: readonly number[]): number[] {
  const map = new Map<number, number>()
  return labels.map((l) => {
    if (!map.has(l)) map.set(l, map.size)
    return map.get(l)!
  })
}
