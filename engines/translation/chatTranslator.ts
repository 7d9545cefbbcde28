// Translation through the chat-model port (any OpenAI-compatible endpoint). Segments go in
// batches as JSON with their `sequence`; the answer must give back every sequence of the batch
// exactly once, or the batch is asked once more and then the translation fails.
import { z } from 'zod'
import type { ChatModel } from '../../ports/chatModel.ts'
import { TranslationError, type SegmentText, type TranslateRequest, type Translator } from '../../ports/translator.ts'
import { LANGUAGE_NAMES, TRANSLATION_LANGUAGES, isTranslationLanguage } from '../../domain/languages.ts'
import { ANY_SOURCE } from '../../domain/transcripts/translationPairs.ts'

const Answer = z.object({ segments: z.array(z.object({ sequence: z.number().int(), text: z.string() })) })

const ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    segments: {
      type: 'array',
      items: { type: 'object', properties: { sequence: { type: 'integer' }, text: { type: 'string' } }, required: ['sequence', 'text'], additionalProperties: false },
    },
  },
  required: ['segments'],
  additionalProperties: false,
}

const nameOf = (code: string | null) => (code && isTranslationLanguage(code) ? LANGUAGE_NAMES[code] : code ?? 'the source language')

/** Splits segments into batches of at most `maxSegments` and about `maxChars` characters. */
export function batches(segments: readonly SegmentText[], maxSegments = 40, maxChars = 6000): SegmentText[][] {
  const out: SegmentText[][] = []
  let cur: SegmentText[] = []
  let chars = 0
  for (const s of segments) {
    if (cur.length > 0 && (cur.length >= maxSegments || chars + s.text.length > maxChars)) {
      out.push(cur)
      cur = []
      chars = 0
    }
    cur.push(s)
    chars += s.text.length
  }
  if (cur.length) out.push(cur)
  return out
}

export function chatTranslator(chat: ChatModel): Translator {
  async function once(req: TranslateRequest, batch: SegmentText[]): Promise<SegmentText[] | string> {
    const res = await chat.complete({
      messages: [
        {
          role: 'system',
          content:
            `You translate transcript segments from ${nameOf(req.from)} into ${nameOf(req.to)}. ` +
            'Answer with JSON {"segments":[{"sequence":n,"text":"..."}]}: one entry per input segment, same sequence numbers, ' +
            'the translation only, keeping names, numbers and meaning; never merge or split segments.',
        },
        { role: 'user', content: JSON.stringify({ segments: batch }) },
      ],
      jsonSchema: { name: 'translated_segments', schema: ANSWER_SCHEMA },
      temperature: 0,
      signal: req.signal,
    })
    let parsed: unknown
    try {
      parsed = JSON.parse(res.content.replace(/^```(?:json)?\s*|\s*```$/g, ''))
    } catch {
      return 'the model did not answer with JSON'
    }
    const answer = Answer.safeParse(parsed)
    if (!answer.success) return 'the model answered JSON of the wrong shape'
    const by = new Map(answer.data.segments.map((s) => [s.sequence, s.text]))
    if (answer.data.segments.length !== batch.length || batch.some((s) => !by.has(s.sequence))) return 'the model did not return every segment exactly once'
    return batch.map((s) => ({ sequence: s.sequence, text: by.get(s.sequence)! }))
  }

  return {
    engine: 'openai-compatible',
    model: chat.model,
    capability: { engine: 'openai-compatible', model: chat.model, pairs: TRANSLATION_LANGUAGES.map((to) => ({ from: ANY_SOURCE, to })), missingPairsHint: null },
    async translate(req) {
      const out: SegmentText[] = []
      for (const batch of batches(req.segments)) {
        let result: SegmentText[] | string
        try {
          result = await once(req, batch)
          if (typeof result === 'string') result = await once(req, batch)
        } catch (err) {
          throw new TranslationError('translation_engine_failed', `The chat model failed: ${(err as Error).message}`)
        }
        if (typeof result === 'string') throw new TranslationError('translation_engine_failed', `The chat model could not translate: ${result}.`)
        out.push(...result)
      }
      return out
    },
  }
}
