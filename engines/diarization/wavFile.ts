// A 16 kHz mono WAV file (the pipeline's decoded audio) read into samples, for the diarizer and
// the speech-activity check.
import { readFile } from 'node:fs/promises'
import { readWav, resample } from '../../domain/audio/pcm.ts'

/** The samples of a WAV file at `rate` (resampled when the file has another rate). */
export async function readWavFile(path: string, rate: number): Promise<Float32Array> {
  const pcm = readWav(await readFile(path))
  if (!pcm) throw new Error(`${path} is not a WAV file`)
  return resample(pcm.samples, pcm.sampleRate, rate)
}
