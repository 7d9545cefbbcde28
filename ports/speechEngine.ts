// Speech engines behind one port: the local engines (faster-whisper on CTranslate2, the
// whisper.cpp binding) and any OpenAI-compatible `/v1/audio/transcriptions` endpoint. Times are
// milliseconds from the start of the audio.

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
  /**
   * The language this segment is in (ISO 639-1), when the engine tells per segment (the local
   * faster-whisper engine does); absent: the recognition's `language`.
   */
  language?: string | null
}

export interface Recognition {
  /** Language the engine detected or was told (ISO 639-1 or a locale), null when unknown. */
  language: string | null
  segments: RecognizedSegment[]
  /** The model that answered, when the engine says. */
  model: string | null
  /** Every language the engine heard, most speech first (ISO 639-1); absent when it only gives `language`. */
  languages?: string[]
}

/** What a local engine runs on, for the start banner and a readiness endpoint. */
export interface SpeechEngineStatus {
  /** `ready`, `preparing` (fetching its runtime or model), `unavailable` (see `reason`). */
  state: 'ready' | 'preparing' | 'unavailable'
  /** One line: engine build, instruction set, model, threads. */
  summary: string
  /** Why it is unavailable, with the command that fixes it. */
  reason: string | null
  details: Record<string, string | number | boolean | null>
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
  /**
   * Where the service's voice activity detection heard speech (ms from the start of `wavPath`).
   * An engine that can use it transcribes every one of these ranges and nothing else; others ignore it.
   */
  speech?: readonly { startMs: number; endMs: number; /** Who speaks there, when the diarizer said before recognition. */ speaker?: number }[]
}

export interface SpeechEngine {
  /** `whisper.cpp` or `openai-compatible`: recorded in the transcript as its engine. */
  readonly engine: string
  /** Who ran it: `local`, or the endpoint's host. */
  readonly provider: string
  readonly model: string
  transcribe(request: SpeechRequest): Promise<Recognition>
  /**
   * Local engines: fetches what the engine needs (runtime, model) and loads it, logging progress;
   * resolves with the status either way (never rejects). Remote engines leave it out.
   */
  prepare?(log: (line: string) => void): Promise<SpeechEngineStatus>
  /** The engine's state now (cheap; no loading). */
  status?(): SpeechEngineStatus
  /** Ends the engine's own processes. */
  close?(): Promise<void>
  /**
   * True while recognition runs inside this process and cannot be interrupted (whisper.cpp's
   * native threads finish their window first): a stopping process then ends without waiting.
   */
  busy?(): boolean
}
