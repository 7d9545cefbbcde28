// The speech-quality bench's scores on cases worked out by hand: WER with jiwer's normalisation,
// DER (missed, false alarm, confusion; collar; one-to-one speaker mapping; overlap), and
// word-boundary errors.
import t from 'tap'
import { boundaryErrors, diarizationError, normalizeWords, wordErrors } from '../bench/speechMetrics.ts'

t.test('WER: jiwer normalisation, substitutions, deletions and insertions', async (t) => {
  t.same(normalizeWords('  Hello, World!  ¿Qué tal?  '), ['hello', 'world', 'qué', 'tal'])
  t.same(wordErrors('the cat sat on the mat', 'The cat, sat on a mat.'), { errors: 1, words: 6 })
  t.same(wordErrors('one two three', 'one three four five'), { errors: 3, words: 3 }, 'a deletion and two insertions')
})

t.test('DER: perfect with renamed speakers, then each kind of error', async (t) => {
  const ref = [
    { startMs: 0, endMs: 10_000, speaker: 'alice' },
    { startMs: 10_000, endMs: 20_000, speaker: 'bob' },
  ]
  const renamed = [
    { startMs: 0, endMs: 10_000, speaker: '2' },
    { startMs: 10_000, endMs: 20_000, speaker: '1' },
  ]
  t.match(diarizationError(ref, renamed), { missedMs: 0, falseAlarmMs: 0, confusionMs: 0 })
  t.match(diarizationError(ref, renamed, 0), { scoredMs: 20_000 })
  const late = [
    { startMs: 0, endMs: 10_000, speaker: 'a' },
    { startMs: 12_000, endMs: 20_000, speaker: 'b' },
  ]
  t.match(diarizationError(ref, late, 0), { missedMs: 2000, falseAlarmMs: 0, confusionMs: 0 })
  const one = [{ startMs: 0, endMs: 22_000, speaker: 'a' }]
  t.match(diarizationError(ref, one, 0), { missedMs: 0, falseAlarmMs: 2000, confusionMs: 10_000 })
  const edge = [
    { startMs: 0, endMs: 10_200, speaker: 'a' },
    { startMs: 10_200, endMs: 20_000, speaker: 'b' },
  ]
  t.match(diarizationError(ref, edge, 250), { confusionMs: 0 }, 'an error inside the collar is not scored')
  t.match(diarizationError(ref, edge, 0), { confusionMs: 200 })
  const overlapped = [...ref, { startMs: 9000, endMs: 10_000, speaker: 'bob' }]
  t.match(diarizationError(overlapped, renamed, 0), { scoredMs: 21_000, missedMs: 1000 }, 'overlapped speech counts per speaker')
})

t.test('word boundaries: errors of the words that match', async (t) => {
  const ref = [
    { text: 'hello', startMs: 0, endMs: 400 },
    { text: 'big', startMs: 500, endMs: 800 },
    { text: 'world', startMs: 900, endMs: 1400 },
  ]
  const hyp = [
    { text: ' Hello', startMs: 20, endMs: 380 },
    { text: 'world.', startMs: 1000, endMs: 1500 },
  ]
  t.same(boundaryErrors(ref, hyp), [20, 20, 100, 100])
})
