// Which translation engine this process uses (TRANSLATION_ENGINE): `auto` (default) takes the
// OpenAI-compatible chat model when LLM_BASE_URL is set, else Apertium when it is installed,
// else none; `llm`, `apertium` and `none` force one.
import type { ChatModel } from '../ports/chatModel.ts'
import type { Translator } from '../ports/translator.ts'
import { apertiumTranslator } from '../adapters/apertium/translator.ts'
import { chatTranslator } from '../engines/translation/chatTranslator.ts'
import { unavailableTranslator } from '../engines/translation/unavailable.ts'

export type TranslationEngineChoice = 'auto' | 'llm' | 'apertium' | 'none'

export async function selectTranslator(choice: TranslationEngineChoice, chat: ChatModel | null): Promise<Translator> {
  if ((choice === 'auto' || choice === 'llm') && chat) return chatTranslator(chat)
  if (choice === 'llm') return unavailableTranslator('TRANSLATION_ENGINE=llm but LLM_BASE_URL is not set: configure an OpenAI-compatible endpoint.')
  if (choice === 'auto' || choice === 'apertium') {
    const apertium = await apertiumTranslator()
    if (apertium) return apertium
    if (choice === 'apertium') return unavailableTranslator('TRANSLATION_ENGINE=apertium but the apertium binary or its language pairs are not installed (apt-get install apertium apertium-eng-spa ...).')
  }
  return unavailableTranslator()
}
