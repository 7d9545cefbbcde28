// The language-engine port for translations: segment texts in, the same segments translated
// out, aligned by `sequence`. Adapters: an OpenAI-compatible chat model, Apertium (local,
// rule-based), or none (every translation then fails saying what to configure).

export interface SegmentText {
  sequence: number
  text: string
}

export interface TranslateRequest {
  /** The audio's language (bare code), or null when unknown. */
  from: string | null
  to: string
  segments: SegmentText[]
  signal?: AbortSignal
}

export interface Translator {
  /** Recorded with the translation: which engine made it. */
  readonly engine: string
  readonly model: string | null
  /** Null when this engine can translate `from` → `to`; otherwise the errorCode and why. */
  check(from: string | null, to: string): Promise<{ errorCode: string; message: string } | null>
  /** Every input segment comes back exactly once, translated; otherwise it throws TranslationError. */
  translate(req: TranslateRequest): Promise<SegmentText[]>
}

/** errorCode values a failed translation records (README, "Translations"). */
export type TranslationErrorCode = 'translation_engine_unavailable' | 'translation_pair_unsupported' | 'translation_engine_failed'

export class TranslationError extends Error {
  override readonly name = 'TranslationError'
  constructor(
    readonly errorCode: TranslationErrorCode,
    message: string,
  ) {
    super(message)
  }
}
