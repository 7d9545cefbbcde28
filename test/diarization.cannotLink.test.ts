// Clustering with cannot-links (adapters/onnxruntime/diarizerWorker.py): two voices alike to the
// speaker embedding (two people on a telephone line: bench/speech-quality.ts merged awb and rms
// into one speaker) are still two local speakers to the segmentation model that hears them side
// by side in one window. Pieces it hears so are never put in one cluster. Checked on the worker's
// own functions, with vectors whose similarities are known.
import t from 'tap'
import { resolve } from 'node:path'
import { diarizerRuntimeDir } from '../adapters/onnxruntime/provision.ts'
import { runWorkerPython } from './support/pythonModule.ts'

const python = (body: string) => runWorkerPython('onnxruntime', 'diarizerWorker', diarizerRuntimeDir(resolve('.ci', 'models')), body)

// Four pieces: 0 and 1 one voice, 2 and 3 another, the two voices 0.8 alike (above the 0.55
// threshold: the embedding alone merges them).
const VECTORS = `
a = np.array([1.0, 0.0]); b = np.array([0.8, 0.6])
v = np.stack([a, a, b, b]); wts = np.ones(4)
`

t.test('given two voices the embedding finds alike, when nothing links them apart, then they are one cluster', async (t) => {
  const labels = python(`${VECTORS}\nprint(json.dumps(w.agglomerate(v, wts, 0.55, None).tolist()))`) as number[]
  t.same(new Set(labels).size, 1)
})

t.test('given a window where the segmentation hears piece 1 and piece 2 as two local speakers, then the two voices stay two clusters, each whole', async (t) => {
  // One 10 s window from 0: local speaker 0 active over piece 1's frames, local speaker 1 over piece 2's.
  const labels = python(`${VECTORS}
S = w.FRAME_STEP
active = np.zeros((w.WINDOW // S + 1, 3))
active[10:20, 0] = 1
active[30:40, 1] = 1
keys = [(100 * S, 110 * S), (10 * S, 20 * S), (30 * S, 40 * S), (120 * S, 130 * S)]
cannot = w.cannot_links([(0, active)], keys, 0.8)
print(json.dumps(w.agglomerate(v, wts, 0.55, None, cannot).tolist()))`) as number[]
  t.equal(labels[0], labels[1], 'one voice')
  t.equal(labels[2], labels[3], 'the other')
  t.not(labels[0], labels[2], 'apart')
})

t.test('given a hint the links cannot reach, then clustering ends with the clusters it can make', async (t) => {
  const labels = python(`${VECTORS}
cannot = np.ones((4, 4), bool)
print(json.dumps(w.agglomerate(v, wts, 0.55, 1, cannot).tolist()))`) as number[]
  t.equal(new Set(labels).size, 4, 'no merge across a link, and no endless loop')
})

t.test('given pieces heard with two local speakers at once (overlap), then they link nothing', async (t) => {
  const links = python(`
S = w.FRAME_STEP
active = np.zeros((w.WINDOW // S + 1, 3))
active[10:20, 0] = 1
active[10:20, 1] = 1
active[30:40, 1] = 1
print(json.dumps(int(w.cannot_links([(0, active)], [(10 * S, 20 * S), (30 * S, 40 * S)], 0.8).sum())))`) as number
  t.equal(links, 0)
})
