// faster-whisper's word alignment can fail on a segment with no frame to align (its find_alignment
// indexes an empty alignment: "IndexError: boolean index did not match indexed array"). On the
// held-out 11-minute meeting of bench/speech-quality.ts that failed the whole recording
// (`asr_failed`). A unit whose alignment fails is now decoded again without word times: its text
// is kept, and the unit is marked so no region of it is decoded a second time for want of words.
// Checked on the worker's own function with a stand-in model that fails as faster-whisper does.
import t from 'tap'
import { resolve } from 'node:path'
import { runtimeDir } from '../adapters/ctranslate2/provision.ts'
import { runWorkerPython } from './support/pythonModule.ts'

const python = (body: string) => runWorkerPython('ctranslate2', 'fasterWhisperWorker', runtimeDir(resolve('.ci', 'models')), body)

const STAND_IN = `
class Segment:
    def __init__(self, text, words):
        self.text, self.words, self.compression_ratio = text, words, 1.0
class Vocabulary:
    def get_vocab(self): return {"hello": 1}
class Model:
    hf_tokenizer = Vocabulary()
    def __init__(self): self.calls = []
    def transcribe(self, audio, word_timestamps, **kw):
        self.calls.append(word_timestamps)
        def gen():
            if word_timestamps:
                raise IndexError("boolean index did not match indexed array along axis 0; size of axis is 0 but size of corresponding boolean axis is 1")
            yield Segment(" Hello there.", None)
        return gen(), None
model = Model()
unit = w.Unit("en")
unit.add([0.0, 1.0])
unit.add([2.0, 3.0])
audio = np.zeros(4 * w.RATE, dtype=np.float32)
`

t.test('given a unit whose word alignment fails, when it is decoded, then its text comes back without word times and the unit is marked untimed', async (t) => {
  const r = python(`${STAND_IN}
segments = w.decode_unit(model, unit, audio, 1)
print(json.dumps({"texts": [s.text for s in segments], "calls": model.calls, "untimed": unit.untimed}))`) as { texts: string[]; calls: boolean[]; untimed: boolean }
  t.same(r.texts, [' Hello there.'], 'the text is kept')
  t.same(r.calls, [true, false], 'tried with word times, then without')
  t.equal(r.untimed, true)
})
