// What translates when nothing can: every translation fails with an errorCode that says what to
// configure. Never a made-up translation.
import { TranslationError, type Translator } from '../../ports/translator.ts'

export const NO_ENGINE_MESSAGE =
  'No translation engine is configured: set LLM_BASE_URL (and LLM_API_KEY, LLM_MODEL) to an OpenAI-compatible endpoint, ' +
  'or install Apertium with its language pairs (apt-get install apertium apertium-eng-spa apertium-es-pt apertium-fr-es apertium-spa-ita).'

export function unavailableTranslator(message = NO_ENGINE_MESSAGE): Translator {
  return {
    engine: 'none',
    model: null,
    capability: { engine: 'none', model: null, pairs: [], missingPairsHint: message },
    async translate() {
      throw new TranslationError('translation_engine_unavailable', message)
    },
  }
}
