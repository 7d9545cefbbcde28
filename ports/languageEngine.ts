// The language-engine port: what the analysis, outline, ask and deliverable features need from
// a language model. Two adapters: the deterministic local engine (engines/language/, the
// default, offline) and any OpenAI-compatible chat endpoint (adapters/openai/languageEngine.ts).
// The data it works on is defined in domain/language/content.ts (events carry it too).

import type { SpokenBy, SourceSegment, SourceTranscript, EngineInfo, ActionItemDraft, SectionItemDraft, AnalysisDraft, ChapterDraft, Passage, AnswerRequest, AnswerDraft, DeliverableKindName, DeliverableRequest, DeliverableSection, DeliverableDraft } from '../domain/language/content.ts'
export type { SpokenBy, SourceSegment, SourceTranscript, EngineInfo, ActionItemDraft, SectionItemDraft, AnalysisDraft, ChapterDraft, Passage, AnswerRequest, AnswerDraft, DeliverableKindName, DeliverableRequest, DeliverableSection, DeliverableDraft }

export interface LanguageEngine {
  /** What a generation made now would be recorded as. */
  readonly info: EngineInfo
  analyze(t: SourceTranscript, template: string, o?: { signal?: AbortSignal }): Promise<{ draft: AnalysisDraft; info: EngineInfo }>
  outline(t: SourceTranscript, o?: { signal?: AbortSignal }): Promise<{ chapters: ChapterDraft[]; info: EngineInfo }>
  answer(r: AnswerRequest, o?: { signal?: AbortSignal }): Promise<{ draft: AnswerDraft; info: EngineInfo }>
  deliverable(r: DeliverableRequest, o?: { signal?: AbortSignal }): Promise<{ draft: DeliverableDraft; info: EngineInfo }>
}

/**
 * The engine could not produce a valid result: `invalid_output` when the model answered with
 * something that does not validate (after the retry), `unavailable` when it did not answer.
 */
export class LanguageEngineError extends Error {
  override readonly name = 'LanguageEngineError'
  constructor(
    readonly kind: 'invalid_output' | 'unavailable',
    message: string,
  ) {
    super(message)
  }
}
