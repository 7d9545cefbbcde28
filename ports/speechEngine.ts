// Speech engines behind one port: the local whisper.cpp binding and any OpenAI-compatible
// `/v1/audio/transcriptions` endpoint. Times are milliseconds from the start of the audio.

export interface RecognizedWord {
  text: string
  startMs: number
  endMs: number
}

export interface RecognizedSegment {
  startMs: number
  endMs: number
  text: string
  /** The provider's own speaker id when it diarizes (any string); null when it does not. */
  speaker: string | null
  confidence: number | null
  words: RecognizedWord[] | null
}

export interface Recognition {
  /** Language the engine detected or was told (ISO 639-1 or a locale), null when unknown. */
  language: string | null
  segments: RecognizedSegment[]
  /** The model that answered, when the engine says. */
  model: string | null
}

export interface SpeechRequest {
  /** 16 kHz mono PCM WAV. */
  wavPath: string
  durationSeconds: number
  /** Forced language (e.g. `es` or `es-ES`), or null to detect. */
  language: string | null
  signal?: AbortSignal
  /** 0..100 */
  onProgress?: (percent: number) => void
  /** Scratch directory for slices. */
  workDir: string
}

export interface SpeechEngine {
  /** `whisper.cpp` or `openai-compatible`: recorded in the transcript as its engine. */
  readonly engine: string
  /** Who ran it: `local`, or the endpoint's host. */
  readonly provider: string
  readonly model: string
  transcribe(request: SpeechRequest): Promise<Recognition>
}
