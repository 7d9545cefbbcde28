// A conversation of questions and answers, stream `ask-<sessionId>`. Sessions belong to one
// account: another account's session id is unknown to the caller. Each answered question is an
// event with the charge it paid, the citations, and the engine that answered.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { streamKind } from '../streams.ts'

export const askStream = streamKind('ask')

/** Earlier turns a follow-up sees. */
export const CONTEXT_TURNS = 6

export type CitedNote = { noteId: string; title: string }

export type QuestionAnswered = DomainEvent<
  'QuestionAnswered',
  {
    sessionId: string
    accountId: string
    /** The note asked about; null for a question over the whole library. */
    noteId: string | null
    question: string
    answer: string
    citedSegments: string[]
    citedNotes: CitedNote[]
    engine: string
    model: string
    version: string
    chargeId: string
    at: string
  }
>
export type AskEvent = QuestionAnswered

export type AskCommand = { type: 'RecordAnswer'; now: string } & Omit<QuestionAnswered['data'], 'at'>

export interface Turn {
  question: string
  answer: string
  noteId: string | null
  citedSegments: string[]
}

/** An answered question as its request got it back, by the charge it paid: what a retried request answers again. */
export interface Answered extends Turn {
  chargeId: string
  citedNotes: CitedNote[]
}

/** Answers kept for retries (the charges' window too). */
const KEPT_ANSWERS = 100

export type AskState = { exists: false } | { exists: true; accountId: string; turns: Turn[]; charges: string[]; answers: Answered[] }

export function evolveAsk(s: AskState, e: AskEvent): AskState {
  const d = e.data
  const turn: Turn = { question: d.question, answer: d.answer, noteId: d.noteId, citedSegments: d.citedSegments }
  const answered: Answered = { ...turn, chargeId: d.chargeId, citedNotes: d.citedNotes }
  if (!s.exists) return { exists: true, accountId: d.accountId, turns: [turn], charges: [d.chargeId], answers: [answered] }
  return { ...s, turns: [...s.turns, turn].slice(-CONTEXT_TURNS), charges: [...s.charges, d.chargeId].slice(-KEPT_ANSWERS), answers: [...s.answers, answered].slice(-KEPT_ANSWERS) }
}

/** The session as its owner sees it; someone else's session and a missing one are the same answer. */
export function ownedSession(s: AskState, accountId: string): Extract<AskState, { exists: true }> {
  if (!s.exists || s.accountId !== accountId) throw new DomainError('not_found', 'No conversation with that sessionId belongs to you; leave sessionId out to start one.')
  return s
}

export function decideAsk(c: AskCommand, s: AskState): AskEvent[] {
  if (s.exists) {
    ownedSession(s, c.accountId)
    if (s.charges.includes(c.chargeId)) return []
  }
  const { type: _, now, ...data } = c
  return [{ type: 'QuestionAnswered', data: { ...data, at: now } }]
}

export const askDecider: Decider<AskCommand, AskEvent, AskState> = {
  decide: decideAsk,
  evolve: evolveAsk,
  initialState: () => ({ exists: false }),
}
