// A turn in a language written in the Latin script comes out in the Latin script: Whisper base,
// decoding an English turn of the held-out bench meeting, wrote "The museum opens at昂珊铁林".
// The worker suppresses every token that holds a byte beginning another script's letter, for the
// decode of a Latin-script language only. Checked with the real tokenizer of Whisper base.
import t from 'tap'
import { join, resolve } from 'node:path'
import { runtimeDir } from '../adapters/ctranslate2/provision.ts'
import { runWorkerPython } from './support/pythonModule.ts'

t.setTimeout(120_000)
const MODELS = resolve('.ci', 'models')

const LATIN = [' café', ' ação', ' l’année', ' Grüße', ' Nguyễn', ' perché', ' 3,50 €', ' ♪ la la', " don't", ' ¿Qué?', ' señor Müller-Øster']
const OTHER = ['昂珊铁林', ' привет', ' Γεια σας', ' שלום', ' مرحبا', ' नमस्ते', ' こんにちは', ' 안녕하세요', ' 😀', ' ок']

const checked = runWorkerPython(
  'ctranslate2',
  'fasterWhisperWorker',
  runtimeDir(MODELS),
  `
import tokenizers
tok = tokenizers.Tokenizer.from_file(${JSON.stringify(join(MODELS, 'whisper-base-ct2', 'tokenizer.json'))})
suppressed = set(w.other_script_tokens(tok))
def split(text):
    ids = tok.encode(text, add_special_tokens=False).ids
    return [(tok.decode([i]), i in suppressed) for i in ids]
def blocked(text):
    return [[c, any(i in suppressed for i in tok.encode(c, add_special_tokens=False).ids)] for c in text if not c.isspace()]
captured = []
class Model:
    hf_tokenizer = tok
    def transcribe(self, audio, **options):
        captured.append(options)
        return iter([]), None
for language in ["en", "fr", "ja", "ru", None]:
    w.decode(Model(), np.zeros(16000, dtype=np.float32), language, 1)
print(json.dumps({
    "latin": {x: split(x) for x in ${JSON.stringify(LATIN)}},
    "other": {x: blocked(x) for x in ${JSON.stringify(OTHER)}},
    "count": len(suppressed),
    "passed": [sorted(set(o["suppress_tokens"]) - {-1}) == sorted(suppressed) if len(o["suppress_tokens"]) > 1 else o["suppress_tokens"] for o in captured],
}))`,
) as { latin: Record<string, [string, boolean][]>; other: Record<string, [string, boolean][]>; count: number; passed: (boolean | number[])[] }

t.test('given the tokens of Latin-script text, then none is suppressed: accents, ligature letters, Vietnamese, currency, the music note', async (t) => {
  for (const [text, tokens] of Object.entries(checked.latin)) t.same(tokens.filter(([, s]) => s), [], `${JSON.stringify(text)} can be written`)
})

t.test('given text in another script, then every character of it needs a suppressed token', async (t) => {
  for (const [text, letters] of Object.entries(checked.other)) t.same(letters.filter(([, s]) => !s), [], `${JSON.stringify(text)} cannot be written`)
  // A sixth of the vocabulary at most: Whisper's Latin-script text keeps nearly all of it.
  t.ok(checked.count > 1000 && checked.count < 51865 / 6, `${checked.count} tokens suppressed`)
})

t.test('given a unit to decode, when its language is written in the Latin script, then the other scripts are suppressed with faster-whisper\'s default set; otherwise only the default set', async (t) => {
  t.same(checked.passed, [true, true, [-1], [-1], [-1]], 'en, fr: suppressed; ja, ru, unknown: faster-whisper\'s default (-1)')
})
