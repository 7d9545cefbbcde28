// The speech-quality bench's scores on cases worked out by hand: WER with jiwer's normalisation,
// DER (missed, false alarm, confusion; collar; one-to-one speaker mapping; overlap), and
// word-boundary errors, and turns no recognized word lies in.
import t from 'tap'
import { boundaryErrors, diarizationError, normalizeWords, turnsWithoutWords, wordErrors } from '../bench/speechMetrics.ts'

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

t.test('given turns and recognized words, when a turn has no word whose middle lies inside it, then it is the one counted as dropped', async (t) => {
  const turns = [
    { startMs: 0, endMs: 1000, speaker: 'a' },
    { startMs: 1200, endMs: 1600, speaker: 'b' },
    { startMs: 2000, endMs: 3000, speaker: 'a' },
  ]
  // The second word starts in turn b but its middle (1700) lies after it; the third's middle is 3000, the turn's end.
  const words = [
    { startMs: 100, endMs: 500 },
    { startMs: 1500, endMs: 1900 },
    { startMs: 2800, endMs: 3200 },
  ]
  t.same(turnsWithoutWords(turns, words), [turns[1]])
  t.same(turnsWithoutWords(turns, []), turns)
})
