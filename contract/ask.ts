// Questions over one note or the whole library (spec parts 2 and 4), answered with citations to
// the transcript segments.
import { z } from 'zod'
import { Uuid, nonBlank } from './common.ts'

const Question = nonBlank(4000)

export const AskRequest = z
  .object({
    question: Question,
    sessionId: Uuid.optional().meta({ description: 'extension: continue a conversation (the sessionId of an earlier answer)' }),
  })
  .meta({ id: 'AskRequest' })
export type AskRequest = z.infer<typeof AskRequest>

export const GlobalAskRequest = z
  .object({ question: Question, sessionId: Uuid.optional().meta({ description: 'pass the returned value to continue the conversation' }) })
  .meta({ id: 'GlobalAskRequest' })
export type GlobalAskRequest = z.infer<typeof GlobalAskRequest>

export const Answer = z
  .object({
    noteId: Uuid,
    question: z.string(),
    answer: z.string().meta({ description: 'quotes the audio as [mm:ss]' }),
    citedSegments: z.array(Uuid).meta({ description: 'transcript segment ids the answer quotes' }),
    sessionId: Uuid.meta({ description: 'extension: pass it back to ask a follow-up' }),
  })
  .meta({ id: 'Answer' })
export type Answer = z.infer<typeof Answer>

export const CitedNote = z.object({ noteId: Uuid, title: z.string() })

export const GlobalAnswer = z
  .object({
    question: z.string(),
    answer: z.string().meta({ description: 'quotes the audio as [Note title | mm:ss]' }),
    citedSegments: z.array(Uuid),
    citedNotes: z.array(CitedNote),
    sessionId: Uuid,
  })
  .meta({ id: 'GlobalAnswer' })
export type GlobalAnswer = z.infer<typeof GlobalAnswer>

/** What a remote model must return for an answer. */
export const AnswerContent = z.object({
  answer: z.string().trim().min(1).max(20_000),
  citedSegments: z.array(z.string()).max(50),
})
