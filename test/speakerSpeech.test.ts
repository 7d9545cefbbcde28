// Speech cut by speaker before recognition (domain/notes/speakerSpeech.ts), and the diarizer
// finding the turns once for both recognition and diarization (engines/diarization/diarizer.ts).
import t from 'tap'
import { speechBySpeaker } from '../domain/notes/speakerSpeech.ts'
import { TurnDiarizer } from '../engines/diarization/diarizer.ts'
import type { SpeakerSegmentation, SpeakerTurns } from '../ports/diarizer.ts'

t.test('given one speech range two speakers share without a pause, then it is cut where the second begins, each piece with its speaker', async (t) => {
  const pieces = speechBySpeaker(
    [{ startMs: 0, endMs: 10_000 }],
    [
      { startMs: 0, endMs: 6000, speaker: 0 },
      { startMs: 5500, endMs: 10_000, speaker: 1 },
    ],
  )
  t.same(pieces, [
    { startMs: 0, endMs: 5500, speaker: 0 },
    { startMs: 5500, endMs: 10_000, speaker: 1 },
  ])
})

t.test('given speech no turn covers, then that piece has no speaker, and one speaker across two ranges stays two ranges', async (t) => {
  const pieces = speechBySpeaker(
    [
      { startMs: 0, endMs: 3000 },
      { startMs: 4000, endMs: 6000 },
    ],
    [{ startMs: 1000, endMs: 6000, speaker: 0 }],
  )
  t.same(pieces, [
    { startMs: 0, endMs: 1000 },
    { startMs: 1000, endMs: 3000, speaker: 0 },
    { startMs: 4000, endMs: 6000, speaker: 0 },
  ])
})

t.test('given turns found before recognition, when the same audio is diarized after it, then the models run once', async (t) => {
  let calls = 0
  const found: SpeakerTurns = { turns: [{ startMs: 0, endMs: 2000, speaker: 0 }], speech: [{ startMs: 0, endMs: 2000 }], confidence: [0.9] }
  const segmentation: SpeakerSegmentation = { model: 'fake', turns: async () => (calls++, found) }
  const diarizer = new TurnDiarizer(segmentation)
  await diarizer.turns({ wavPath: '/a.wav', speakers: null })
  const words = [{ text: 'hello', startMs: 100, endMs: 600 }]
  const d = await diarizer.diarize({ wavPath: '/a.wav', speakers: null, segments: [{ startMs: 100, endMs: 600, text: 'hello', speaker: null, confidence: 1, words }] })
  t.equal(calls, 1)
  t.equal(d.speakerCount, 1)
  await diarizer.diarize({ wavPath: '/a.wav', speakers: null, segments: [{ startMs: 100, endMs: 600, text: 'hello', speaker: null, confidence: 1, words }] })
  t.equal(calls, 2, 'taken once: a later diarization of that path finds the turns again')
})
