// Speaker naming through the chat-model port. The model sees the transcript (cut to a budget),
// the title, the source metadata and the roster, and must answer per label with evidence
// quotes. What it says is checked: unknown labels are dropped, a transcript quote must be found
// in the segment it names (or the evidence is dropped), confidences are clamped to 0..1, and a
// name with no evidence left is not suggested. A failed call or an unusable answer throws, and
// the caller answers 502 speaker_naming_failed with nothing changed.
import { z } from 'zod'
import type { ChatModel } from '../../ports/chatModel.ts'
import type { SpeakerNamer } from '../../ports/speakerNamer.ts'
import type { Evidence, NameSuggestion } from '../../domain/speakers/speakers.ts'
import type { InferenceInput } from '../../domain/speakers/inference.ts'

const Answer = z.object({
  speakers: z.array(
    z.object({
      label: z.string(),
      name: z.string().nullable(),
      confidence: z.number().nullable(),
      evidence: z.array(z.object({ source: z.enum(['transcript', 'metadata', 'roster']), segment: z.number().int().nullable(), quote: z.string() })),
    }),
  ),
})

const SCHEMA = {
  type: 'object',
  properties: {
    speakers: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          label: { type: 'string' },
          name: { type: ['string', 'null'] },
          confidence: { type: ['number', 'null'] },
          evidence: {
            type: 'array',
            items: {
              type: 'object',
              properties: { source: { enum: ['transcript', 'metadata', 'roster'] }, segment: { type: ['integer', 'null'] }, quote: { type: 'string' } },
              required: ['source', 'segment', 'quote'],
            },
          },
        },
        required: ['label', 'name', 'confidence', 'evidence'],
      },
    },
  },
  required: ['speakers'],
}

export class SpeakerNamingError extends Error {
  override readonly name = 'SpeakerNamingError'
}

const norm = (s: string) => s.normalize('NFKC').toLocaleLowerCase().replace(/\s+/g, ' ').trim()

export function chatSpeakerNamer(chat: ChatModel, budgetChars = 24_000): SpeakerNamer {
  return {
    engine: 'openai-compatible',
    model: chat.model,
    async suggest(input: InferenceInput, signal?: AbortSignal): Promise<NameSuggestion[]> {
      const labels = [...new Set(input.segments.map((s) => s.speakerLabel).filter((l): l is string => !!l))].sort()
      const lines: string[] = []
      let used = 0
      for (const s of input.segments) {
        const line = `#${s.sequence} [${s.speakerLabel ?? '?'}] ${s.text}`
        if (used + line.length > budgetChars) break
        lines.push(line)
        used += line.length
      }
      let content: string
      try {
        const res = await chat.complete({
          messages: [
            {
              role: 'system',
              content:
                'You identify the speakers of a diarized transcript (labels A, B, ...) by name, using only self-introductions, who addresses whom, ' +
                'the title, the show or channel metadata and the roster of people confirmed on earlier episodes of the same source. The transcript may be in ' +
                'Spanish, English, German, French, Italian or Portuguese. Never guess from voices. For each label answer name (or null), confidence 0..1, and ' +
                'evidence: quotes copied exactly from the transcript with their segment number (#n), or from the metadata or roster. ' +
                'Answer JSON {"speakers":[{"label","name","confidence","evidence":[{"source","segment","quote"}]}]}.',
            },
            {
              role: 'user',
              content: JSON.stringify({ title: input.title, metadata: input.metadata, roster: input.roster, labels, transcript: lines.join('\n') }),
            },
          ],
          jsonSchema: { name: 'speaker_names', schema: SCHEMA },
          temperature: 0,
          signal,
        })
        content = res.content
      } catch (err) {
        throw new SpeakerNamingError(`The chat model failed: ${(err as Error).message}`)
      }
      let parsed: z.infer<typeof Answer>
      try {
        parsed = Answer.parse(JSON.parse(content.replace(/^```(?:json)?\s*|\s*```$/g, '')))
      } catch {
        throw new SpeakerNamingError('The chat model did not answer with the expected JSON.')
      }
      const texts = new Map(input.segments.map((s) => [s.sequence, norm(s.text)]))
      return labels.map((label) => {
        const a = parsed.speakers.find((s) => s.label === label)
        const name = a?.name?.trim().slice(0, 120) || null
        const evidence: Evidence[] = (a?.evidence ?? [])
          .filter((e) => (e.source === 'transcript' ? e.segment !== null && !!texts.get(e.segment)?.includes(norm(e.quote)) : e.quote.trim().length > 0))
          .map((e) => ({ source: e.source, segment: e.source === 'transcript' ? e.segment : null, quote: e.quote.trim().slice(0, 300) }))
        if (!name || evidence.length === 0) return { label, name: null, confidence: null, evidence: [] }
        const confidence = Math.min(1, Math.max(0, a?.confidence ?? 0))
        return { label, name, confidence: Math.round(confidence * 1000) / 1000, evidence }
      })
    },
  }
}
