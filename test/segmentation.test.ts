// Segments end at sentence ends and pauses, never at fixed windows (domain/notes/segmentation.ts).
import t from 'tap'
import { segmentWords, type TimedWord } from '../domain/notes/segmentation.ts'

/** Words spoken one after another: `text` split on spaces, `ms` each, `gaps` (after word i) in ms. */
function spoken(text: string, ms = 300, gaps: Record<number, number> = {}, from = 0): TimedWord[] {
  let at = from
  return text.split(' ').map((w, i) => {
    const word = { text: ` ${w}`, startMs: at, endMs: at + ms }
    at += ms + (gaps[i] ?? 20)
    return word
  })
}

t.test('a segment ends after each sentence that is long enough to stand alone', async (t) => {
  const segs = segmentWords(spoken('We reviewed the quarterly numbers today. Sales grew in the north. Costs stayed flat.'))
  t.same(segs.map((s) => s.text), ['We reviewed the quarterly numbers today.', 'Sales grew in the north.', 'Costs stayed flat.'])
  t.equal(segs[0]!.startMs, 0)
  t.equal(segs[1]!.startMs, segs[0]!.words.at(-1)!.endMs + 20, 'a segment starts with its first word')
})

t.test('a pause ends a segment even without punctuation', async (t) => {
  const segs = segmentWords(spoken('so we wait for the roof then we open the warehouse', 300, { 4: 900 }))
  t.same(segs.map((s) => s.text), ['so we wait for the', 'roof then we open the warehouse'])
})

t.test('short sentences with no pause between them stay together', async (t) => {
  const segs = segmentWords(spoken('Yes. Sure. I agree with that plan completely.', 250))
  t.same(segs.map((s) => s.text), ['Yes. Sure. I agree with that plan completely.'])
})

t.test('a run-on monologue is cut at its longest pauses, never into windows of fixed length', async (t) => {
  // 120 words of 300 ms with no punctuation: 38 s; slightly longer gaps after words 39 and 79.
  const text = Array.from({ length: 120 }, (_, i) => `w${i}`).join(' ')
  const segs = segmentWords(spoken(text, 300, { 39: 400, 79: 400 }))
  t.ok(segs.every((s) => s.endMs - s.startMs <= 20_000), 'no segment over the maximum')
  t.same(segs.map((s) => s.words.at(-1)!.text.trim()), ['w39', 'w79', 'w119'], 'cut where the speaker paused')
})

t.test('every word lands in exactly one segment, in order, and segments do not overlap', async (t) => {
  const words = spoken('One. Two three four five six seven. Eight nine, ten eleven twelve? Thirteen', 400, { 2: 1200, 9: 100 })
  const segs = segmentWords(words)
  t.same(segs.flatMap((s) => s.words), words)
  for (let i = 1; i < segs.length; i++) t.ok(segs[i]!.startMs >= segs[i - 1]!.endMs)
  t.ok(segs.every((s) => s.words.every((w) => w.startMs >= s.startMs && w.endMs <= s.endMs)))
})

t.test('no words, no segments', async (t) => {
  t.same(segmentWords([]), [])
})
