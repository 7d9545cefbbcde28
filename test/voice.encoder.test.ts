// The speaker encoder reads WAV itself and everything else through the project's ffmpeg (from
// npm): the same speech as MP3 gives the same voice.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadGe2eEncoder } from '../adapters/ge2e/speakerEncoder.ts'
import { ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'
import { cosineSimilarity } from '../domain/voice/voiceProfiles.ts'
import { conversation, speakerModel, MALE } from './support/speech.ts'
import { tempDir } from './support/tmp.ts'

t.test('given speech as WAV and as MP3, then both embed to the same voice', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const { wav, segments } = conversation([['A', MALE, 'Good morning, this is the weekly budget review and I will go through the numbers.']])
  const wavPath = join(tmp.dir, 'a.wav')
  writeFileSync(wavPath, wav)
  const mp3Path = join(tmp.dir, 'a.mp3')
  execFileSync(ffmpegPath(), ['-v', 'error', '-y', '-i', wavPath, '-c:a', 'libmp3lame', '-b:a', '96k', mp3Path])
  const encoder = loadGe2eEncoder(speakerModel(), ffmpegPath())
  const ranges = [{ startMs: segments[0]![1], endMs: segments[0]![2] }]
  const fromWav = await encoder.embed(wavPath, ranges)
  const fromMp3 = await encoder.embed(mp3Path, ranges)
  t.ok(fromWav && fromMp3, 'both decode')
  const similarity = cosineSimilarity(fromWav!.vector, fromMp3!.vector)
  t.ok(similarity > 0.9, `cosine similarity ${similarity.toFixed(3)}`)
})
