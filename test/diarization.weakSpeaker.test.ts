// Without a hint, a speaker barely apart from another is one speaker too many
// (adapters/onnxruntime/diarizerWorker.py, minSpeakerConfidence). Telephone speech gives loose
// clusters: their pieces are alike on average too little for average linkage to join them, while
// each piece is nearly as close to the other speaker's centroid as to its own. Checked on the
// worker's own functions with vectors built to be so: three voices of six 1-s pieces each in 64
// dimensions, A and B far apart, C's centre at `cosAC` from A's, each piece its centre plus noise.
import t from 'tap'
import { resolve } from 'node:path'
import { diarizerRuntimeDir } from '../adapters/onnxruntime/provision.ts'
import { runWorkerPython } from './support/pythonModule.ts'

const python = (body: string) => runWorkerPython('onnxruntime', 'diarizerWorker', diarizerRuntimeDir(resolve('.ci', 'models')), body)

const voices = (cosAC: number) => `
rng = np.random.default_rng(7)
def unit(x): return x / np.linalg.norm(x)
a = unit(rng.standard_normal(64)); o = unit(rng.standard_normal(64)); o = unit(o - (o @ a) * a)
b = unit(rng.standard_normal(64)); b = unit(b - (b @ a) * a - (b @ o) * o)
c = ${cosAC} * a + np.sqrt(1 - ${cosAC} ** 2) * o
v = np.stack([unit(m + 0.8 * rng.standard_normal(64) / 8) for m in (a, b, c) for _ in range(6)])
wts = np.ones(18)
def run(k, **opts):
    labels = w.cluster(v, wts, k, dict(w.DEFAULTS, **opts))
    return {"labels": labels.tolist(), "confidence": sorted(round(x, 3) for x in w.confidences(v, wts, labels, w.centroids_of(v, labels, wts)).values())}
`

t.test('given a third voice whose pieces are barely closer to their own centre than to another speaker\'s, when there is no hint, then it is merged into that speaker', async (t) => {
  const r = python(`${voices(0.87)}
print(json.dumps({"off": run(None, minSpeakerConfidence=0), "on": run(None), "hint": run(3)}))`) as Record<'off' | 'on' | 'hint', { labels: number[]; confidence: number[] }>
  t.equal(new Set(r.off.labels).size, 3, 'average linkage alone: three speakers')
  t.ok(r.off.confidence[0]! < 0.375, `two of them barely apart (confidence ${r.off.confidence.join(', ')})`)
  t.equal(new Set(r.on.labels).size, 2, 'merged: two speakers')
  t.equal(r.on.labels.slice(12).every((l) => l === r.on.labels[0]), true, 'C joined A, its nearest')
  t.not(r.on.labels[6], r.on.labels[0], 'B stays apart')
  t.equal(new Set(r.hint.labels).size, 3, 'a hint of three is kept: the count is the caller\'s')
})

t.test('given a third voice clearly apart, then it stays a speaker', async (t) => {
  const r = python(`${voices(0.7)}
print(json.dumps(run(None)))`) as { labels: number[]; confidence: number[] }
  t.equal(new Set(r.labels).size, 3)
  t.ok(r.confidence[0]! >= 0.375, `confidences ${r.confidence.join(', ')}`)
})
