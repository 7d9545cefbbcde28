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
  /**
   * How clearly each speaker's voice stands apart from the others' (0 to 1), by speaker id, when
   * the diarizer can tell; absent otherwise.
   */
  confidence?: Record<string, number>
}

export interface Diarizer {
  /** What runs it, e.g. `ge2e:resemblyzer-0.1.4-pretrained.pt`. */
  readonly model: string
  diarize(request: DiarizationRequest): Promise<Diarization>
  /**
   * Who speaks when, before recognition (which then identifies the language per speaker turn);
   * a diarize() of the same audio afterwards reuses these turns instead of finding them again.
   */
  turns?(request: { wavPath: string; speakers: number | null; signal?: AbortSignal }): Promise<SpeakerTurns>
}

/** One stretch of one speaker's voice; stretches of two speakers overlap where they talk at once. */
export interface SpeakerTurn {
  startMs: number
  endMs: number
  /** 0, 1, ... in order of first appearance. */
  speaker: number
}

export interface SpeakerTurns {
  turns: SpeakerTurn[]
  /** Where anyone speaks. */
  speech: TimeRange[]
  /** By speaker index: how clearly the voice stands apart from the others' (0 to 1), or null. */
  confidence: (number | null)[]
}

/** Who speaks when, from the audio alone: the model side of a diarizer. */
export interface SpeakerSegmentation {
  /** What runs it, e.g. `pyannote segmentation-3.0 + CAM++ + Silero VAD`. */
  readonly model: string
  turns(request: { wavPath: string; speakers: number | null; signal?: AbortSignal }): Promise<SpeakerTurns>
}

/** Where in a recording someone speaks (or anything loud enough to be speech). */
export interface SpeechActivity {
  /** Speech ranges of a 16 kHz mono PCM WAV, in order. */
  detect(wavPath: string): Promise<TimeRange[]>
}
