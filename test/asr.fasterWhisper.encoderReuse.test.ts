// Language identification costs one encoder pass per speech region (Whisper's encoder always
// reads a 30-s window). When a region is then decoded alone, the usual case for a speaker's turn,
// the decode reads the same window: the worker keeps the encoder's output and reuses it, which
// changes no number in the transcript. Checked on the worker's own functions with the real model.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { runtimeDir } from '../adapters/ctranslate2/provision.ts'
import { runWorkerPython } from './support/pythonModule.ts'
import { tempDir } from './support/tmp.ts'

t.setTimeout(300_000)
const MODELS = resolve('.ci', 'models')
const tmp = tempDir('asr-reuse-')
t.teardown(tmp.remove)

const wav = join(tmp.dir, 'turn.wav')
execFileSync('espeak-ng', ['-v', 'es', '-w', join(tmp.dir, 'raw.wav'), 'Buenos días a todos, la reunión de hoy trata del presupuesto.'])
execFileSync('sox', ['-D', join(tmp.dir, 'raw.wav'), '-r', '16000', '-b', '16', '-c', '1', wav, 'pad', '0.3', '0.5'])

/** The region's language, then its decode alone, counting the encoder passes the model really makes. */
const run = (cached: boolean) =>
  runWorkerPython(
    'ctranslate2',
    'fasterWhisperWorker',
    runtimeDir(MODELS),
    `
from faster_whisper import WhisperModel
model = WhisperModel(${JSON.stringify(join(MODELS, 'whisper-base-ct2'))}, device="cpu", compute_type="int8", cpu_threads=2)
passes = []
inner = model.encode
def counting(features):
    passes.append(1)
    return inner(features)
model.encode = w.EncoderCache(counting) if ${cached ? 'True' : 'False'} else counting
audio = w.read_wav(${JSON.stringify(wav)})
region = [0.25, len(audio) / w.RATE - 0.4]
probs = w.identify(model, ["en", "es", "de"], w.samples(audio, region[0], region[1]))
after_lid = len(passes)
unit = w.Unit(probs[0][0])
unit.add(region)
segments = w.decode_unit(model, unit, audio, 1)
print(json.dumps({"language": probs[0][0], "lid": after_lid, "total": len(passes), "segments": [[s.text, s.start, s.end, [[x.word, x.start, x.end, x.probability] for x in s.words]] for s in segments]}))`,
  ) as { language: string; lid: number; total: number; segments: unknown[] }

t.test('given a region decoded alone after its language was identified, when the worker decodes it, then the encoder runs once for both, and the transcript is the one without reuse, number for number', async (t) => {
  const reused = run(true)
  const plain = run(false)
  t.equal(reused.language, 'es')
  t.equal(reused.lid, 1, 'language identification: one encoder pass')
  t.equal(reused.total, 1, 'the decode reused it')
  t.equal(plain.total, 2, 'without the cache the decode encodes the same window again')
  t.same(reused.segments, plain.segments)
  t.ok(reused.segments.length > 0)
})
