// Who spoke when, as a step after recognition: the decoded 16 kHz mono audio and the recognized
// segments (with their words when the engine gave them) in, the same speech with a speaker on
// every segment out. A segment is split where the speaker changes between two of its words.
import type { RecognizedSegment } from './speechEngine.ts'
import type { TimeRange } from './speakerEmbedder.ts'

export interface DiarizationRequest {
  /** 16 kHz mono PCM WAV: the audio the speech engine heard. */
  wavPath: string
  segments: readonly RecognizedSegment[]
  /** How many people speak, when the user said so; null to find out. */
  speakers: number | null
  signal?: AbortSignal
}

export interface Diarization {
  /** The segments with `speaker` set (ids `1`, `2`, ... in order of first appearance). */
  segments: RecognizedSegment[]
  speakerCount: number
}

export interface Diarizer {
  /** What runs it, e.g. `ge2e:resemblyzer-0.1.4-pretrained.pt`. */
  readonly model: string
  diarize(request: DiarizationRequest): Promise<Diarization>
}

/** Where in a recording someone speaks (or anything loud enough to be speech). */
export interface SpeechActivity {
  /** Speech ranges of a 16 kHz mono PCM WAV, in order. */
  detect(wavPath: string): Promise<TimeRange[]>
}
