// Without a hint, two voices the embedding hears as one can still differ in pitch
// (adapters/onnxruntime/diarizerWorker.py, pitchGap): four espeak-ng voices were counted as three
// because CAM++ puts two of them as close as one voice to itself, although one speaks 6-10
// semitones higher. Checked on the worker's own functions: the pitch tracker on tones with known
// pitch, and the split on pieces built to be so.
import t from 'tap'
import { resolve } from 'node:path'
import { diarizerRuntimeDir } from '../adapters/onnxruntime/provision.ts'
import { runWorkerPython } from './support/pythonModule.ts'

const python = (body: string) => runWorkerPython('onnxruntime', 'diarizerWorker', diarizerRuntimeDir(resolve('.ci', 'models')), body)
const semitones = (hz: number) => 12 * Math.log2(hz)

t.test('given voiced tones, when the pitch of a piece is measured, then it is their fundamental, even with the fundamental filtered out; noise has none', async (t) => {
  const r = python(`
t = np.arange(2 * w.SR) / w.SR
def tone(f0, first=1): return sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(first, 12)).astype(np.float32) * 0.2
noise = np.random.default_rng(1).standard_normal(len(t)).astype(np.float32) * 0.2
print(json.dumps({k: (None if np.isnan(p) else p) for k, p in {
  "male": w.piece_pitch(tone(110), w.DEFAULTS), "female": w.piece_pitch(tone(220), w.DEFAULTS),
  "phone": w.piece_pitch(tone(110, first=3), w.DEFAULTS), "noise": w.piece_pitch(noise, w.DEFAULTS),
  "silence": w.piece_pitch(np.zeros(len(t), np.float32), w.DEFAULTS)}.items()}))`) as Record<string, number | null>
  t.ok(Math.abs(r.male! - semitones(110)) < 0.3, `110 Hz: ${r.male}`)
  t.ok(Math.abs(r.female! - semitones(220)) < 0.3, `220 Hz: ${r.female}`)
  t.ok(Math.abs(r.phone! - semitones(110)) < 0.3, `110 Hz without its first two harmonics (a telephone line): ${r.phone}`)
  t.equal(r.noise, null, 'white noise: no pitch')
  t.equal(r.silence, null, 'silence: no pitch')
})

// Pieces of 1.5 s in 64 dimensions: A and B two voices the embedding cannot tell apart (one centre),
// C far from both. `pitchB` is B's pitch in semitones; A speaks at 80, C at 90.
const pieces = (pitchB: number, stray = false) => `
rng = np.random.default_rng(3)
def unit(x): return x / np.linalg.norm(x)
ab = unit(rng.standard_normal(64)); c = unit(rng.standard_normal(64))
v = np.stack([unit(m + rng.standard_normal(64) / 20) for m in (ab, ab, c) for _ in range(4)])
wts = np.full(12, 1.5)
pitch = np.array([80, 80.5, 79.6, 80.2, ${pitchB}, ${pitchB} + 0.4, ${pitchB} - 0.3, np.nan, 90, 90.3, 89.8, 90.1])
${stray ? 'pitch[4:7] = [90.2, 89.9, 90.1]  # no B: three of C\'s pieces the clustering put with A' : ''}
labels = w.cluster(v, wts, None, w.DEFAULTS)
def run(**opts): return w.split_by_pitch(v, wts, labels, pitch, dict(w.DEFAULTS, **opts)).tolist()
`

t.test('given two voices alike to the embedding, 8 semitones apart in pitch, when there is no hint, then they are two speakers', async (t) => {
  const r = python(`${pieces(88)}
print(json.dumps({"clustered": labels.tolist(), "split": run(), "off": run(pitchGap=0)}))`) as Record<'clustered' | 'split' | 'off', number[]>
  t.equal(new Set(r.clustered).size, 2, 'the embedding alone: A and B one speaker, C another')
  t.equal(new Set(r.split).size, 3, 'split by pitch: three speakers')
  t.equal(new Set(r.split.slice(0, 4)).size, 1, "A's pieces together")
  t.equal(new Set(r.split.slice(4, 7)).size, 1, "B's pitched pieces together (its unpitched one goes to whichever centroid is nearer: to the embedding the two are one)")
  t.not(r.split[0], r.split[4], 'A and B apart')
  t.equal(new Set(r.split.slice(8)).size, 1, 'C untouched')
  t.same(r.off, r.clustered, 'pitchGap 0: no split')
})

t.test('given one voice whose pieces differ by less than the gap, then it stays one speaker', async (t) => {
  const r = python(`${pieces(83)}
print(json.dumps(run()))`) as number[]
  t.equal(new Set(r).size, 2, '3 semitones: one person speaking higher')
})

t.test('given pieces of a voice already a speaker put astray, when they are split off by pitch, then they join that speaker instead of becoming a new one', async (t) => {
  const r = python(`${pieces(0, true)}
print(json.dumps(run()))`) as number[]
  t.equal(new Set(r).size, 2, 'still two speakers')
  t.equal(r[4], r[8], "the pieces at C's pitch joined C")
  t.not(r[0], r[8], 'A stays apart')
})
