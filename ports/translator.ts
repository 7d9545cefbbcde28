// The language-engine port for translations: segment texts in, the same segments translated
// out, aligned by `sequence`. Adapters: an OpenAI-compatible chat model, Apertium (local,
// rule-based), or none (every translation then fails saying what to configure).
import type { TranslationCapability } from '../domain/transcripts/translationPairs.ts'
import type { TranslationLanguage } from '../domain/languages.ts'

export interface SegmentText {
  sequence: number
  text: string
}

export interface TranslateRequest {
  /** The audio's language (bare code), or null when unknown. */
  from: string | null
  to: TranslationLanguage
  segments: SegmentText[]
  signal?: AbortSignal
}

export interface Translator {
  /** Recorded with the translation: which engine made it. */
  readonly engine: string
  readonly model: string | null
  /** The pairs it translates: requests for others are refused when made, and never reach `translate`. */
  readonly capability: TranslationCapability
  /** Every input segment comes back exactly once, translated; otherwise it throws TranslationError. */
  translate(req: TranslateRequest): Promise<SegmentText[]>
}

/** errorCode values a failed translation records (docs/speech.md, "Translations"). */
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
