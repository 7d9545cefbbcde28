// A unit whose text loops (Whisper's compression-ratio rule, > 2.4) is decoded again, always at
// temperature 0 so the transcript stays reproducible: with beam search (5), and when that loops
// too, with beam search that may not repeat any three tokens. A held-out French clip came back
// "Je, ou, ou, ou, …" greedy and with beam 5 alike (bench/speech-quality.ts, WER 356 %), and in
// French with the third decode. Checked on the worker's own function with a stand-in model that
// loops until repeats are forbidden.
import t from 'tap'
import { resolve } from 'node:path'
import { runtimeDir } from '../adapters/ctranslate2/provision.ts'
import { runWorkerPython } from './support/pythonModule.ts'

const python = (body: string) => runWorkerPython('ctranslate2', 'fasterWhisperWorker', runtimeDir(resolve('.ci', 'models')), body)

const STAND_IN = (loopsUntil: string) => `
class Segment:
    def __init__(self, text, ratio):
        self.text, self.words, self.compression_ratio = text, [], ratio
class Vocabulary:
    def get_vocab(self): return {"hello": 1}
class Model:
    hf_tokenizer = Vocabulary()
    def __init__(self): self.calls = []
    def transcribe(self, audio, beam_size, no_repeat_ngram_size, temperature, **kw):
        self.calls.append([beam_size, no_repeat_ngram_size, temperature])
        looping = not (${loopsUntil})
        return iter([Segment(" Je, ou, ou, ou, ou, ou, ou, ou, ou." if looping else " Je trouve que le concert était meilleur.", 22.3 if looping else 1.1)]), None
model = Model()
unit = w.Unit("fr")
unit.add([0.0, 6.0])
audio = np.zeros(7 * w.RATE, dtype=np.float32)
`

const run = (loopsUntil: string, beam = 1) =>
  python(`${STAND_IN(loopsUntil)}
segments = w.decode_unit(model, unit, audio, ${beam})
print(json.dumps({"texts": [s.text for s in segments], "calls": model.calls}))`) as { texts: string[]; calls: [number, number, number][] }

t.test('given a unit that loops greedy and with beam 5, when it is decoded, then the third decode forbids repeated 3-grams and its text is kept, all at temperature 0', async (t) => {
  const r = run('no_repeat_ngram_size > 0')
  t.same(r.texts, [' Je trouve que le concert était meilleur.'])
  t.same(r.calls, [[1, 0, 0], [5, 0, 0], [5, 3, 0]], 'greedy, beam 5, beam 5 without repeated 3-grams')
})

t.test('given a unit that loops greedy only, when it is decoded, then beam 5 is kept and repeats stay allowed', async (t) => {
  const r = run('beam_size == 5')
  t.same(r.texts, [' Je trouve que le concert était meilleur.'])
  t.same(r.calls, [[1, 0, 0], [5, 0, 0]])
})

t.test('given a unit that does not loop, when it is decoded, then it is decoded once', async (t) => {
  t.same(run('True').calls, [[1, 0, 0]])
})

t.test('given a configured beam of 5 and a unit that loops, when it is decoded, then the second decode is the one without repeated 3-grams', async (t) => {
  const r = run('no_repeat_ngram_size > 0', 5)
  t.same(r.calls, [[5, 0, 0], [5, 3, 0]])
})
