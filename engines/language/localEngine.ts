// The deterministic local language engine (the default): extraction over the transcript, no
// model weights, no network. The same input always gives the same output, and every item can be
// traced back to the segment it came from.
import type { EngineInfo, LanguageEngine } from '../../ports/languageEngine.ts'
import { analyzeLocally } from './analyze.ts'
import { outlineLocally } from './outline.ts'
import { answerLocally } from './answer.ts'
import { deliverableLocally } from './deliverable.ts'

/** Bumped whenever the extraction changes what it produces, so stored results say which rules made them. */
export const LOCAL_ENGINE_VERSION = '1.0.0'
export const LOCAL_ENGINE_INFO: EngineInfo = { engine: 'local', model: 'local-extractive', version: LOCAL_ENGINE_VERSION }

/** Lets the event loop serve other requests between two pieces of CPU work (a long transcript takes ~0.5 s). */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

export function localLanguageEngine(): LanguageEngine {
  const info = LOCAL_ENGINE_INFO
  return {
    info,
    analyze: async (t, template) => (await yieldToLoop(), { draft: analyzeLocally(t, template), info }),
    outline: async (t) => (await yieldToLoop(), { chapters: outlineLocally(t), info }),
    answer: async (r) => ({ draft: answerLocally(r), info }),
    deliverable: async (r) => (await yieldToLoop(), { draft: deliverableLocally(r), info }),
  }
}
