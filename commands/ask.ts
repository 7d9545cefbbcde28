// Questions with citations: POST /v1/notes/{id}/ask, POST /v1/ask, MCP ask_note. 10 credits
// each, refunded (502 chat_failed) when the engine does not answer. Retrieval is BM25 over the
// caller's own transcript segments (the segment index's `SegmentReads`); the answer quotes the passages it
// uses as [mm:ss] (one note) or [Note title | mm:ss] (library), and `citedSegments` are exactly
// the quoted passages. A `sessionId` continues a conversation: the engine sees the earlier turns
// and retrieval leans on their questions too.
import { transcriptPreviewFor } from '../domain/transcripts/preview.ts'
import { DomainError } from '../domain/errors.ts'
import { PRICES } from '../domain/credits/prices.ts'
import { uuidFromName } from '../domain/ids.ts'
import { askDecider, askStream, ownedSession, type CitedNote, type Turn } from '../domain/ask/session.ts'
import { termFrequencies } from '../domain/search/terms.ts'
import type { Passage } from '../domain/language/content.ts'
import { LanguageEngineError, type LanguageEngine } from '../ports/languageEngine.ts'
import { mmss } from '../domain/language/time.ts'
import type { Answer, AskRequest, GlobalAnswer, GlobalAskRequest } from '../contract/ask.ts'
import type { CommandHandler } from './handleCommand.ts'
import { chargeIdOf, type CreditCommands } from './credits.ts'
import type { Caller } from './context.ts'
import type { NoteReads, SegmentReads } from './reads.ts'

export interface AskCommandsDeps {
  handler: CommandHandler
  credits: CreditCommands
  notes: Pick<NoteReads, 'ready'>
  segments: SegmentReads
  engine: LanguageEngine
  clock?: () => Date
}

/** Passages retrieved per question. */
const PASSAGES = 8
/** Weight of the earlier questions' terms in a follow-up's retrieval. */
const CONTEXT_WEIGHT = 0.35

/** A title as it can sit inside [Title | mm:ss]. */
const labelTitle = (title: string) => title.replace(/[[\]|\n\r]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 120) || 'Untitled'

export function queryWeights(question: string, history: readonly Turn[]): Map<string, number> {
  const weights = new Map<string, number>()
  for (const [t, n] of termFrequencies(question)) weights.set(t, 1 + 0.2 * (n - 1))
  for (const turn of history.slice(-2)) for (const t of termFrequencies(turn.question).keys()) if (!weights.has(t)) weights.set(t, CONTEXT_WEIGHT)
  return weights
}

export class AskCommands {
  private readonly clock: () => Date
  constructor(private readonly deps: AskCommandsDeps) {
    this.clock = deps.clock ?? (() => new Date())
  }

  /** POST /v1/notes/{id}/ask, MCP ask_note. */
  async askNote(caller: Caller, noteId: string, body: AskRequest): Promise<Answer> {
    await this.deps.notes.ready(caller.accountId, noteId)
    const r = await this.ask(caller, noteId, body.question, body.sessionId)
    return { noteId, question: body.question, answer: r.answer, citedSegments: r.citedSegments, sessionId: r.sessionId }
  }

  /** POST /v1/ask: over every note the caller owns. */
  async askLibrary(caller: Caller, body: GlobalAskRequest): Promise<GlobalAnswer> {
    const r = await this.ask(caller, null, body.question, body.sessionId)
    return { question: body.question, answer: r.answer, citedSegments: r.citedSegments, citedNotes: r.citedNotes, sessionId: r.sessionId }
  }

  private async ask(caller: Caller, noteId: string | null, question: string, givenSession: string | undefined) {
    // A new conversation's id comes from the request id (the Idempotency-Key when sent), so a
    // retried request finds the conversation, and the answer, its first attempt recorded.
    const sessionId = givenSession ?? uuidFromName(`ask-session:${caller.accountId}`, caller.requestId)
    const { state: session } = await this.deps.handler.load(askStream.of(sessionId), askDecider)
    const history: Turn[] = givenSession || session.exists ? ownedSession(session, caller.accountId).turns : []
    const price = noteId ? PRICES.askNote : PRICES.askLibrary
    const charge = { operation: price.operation, cost: price.credits, noteId }
    const chargeId = chargeIdOf(caller.requestId, charge, { sessionId, question })
    if (session.exists) {
      const answered = session.answers.find((a) => a.chargeId === chargeId)
      // The same request again (a client retrying after a timeout): the first answer, not charged again.
      if (answered) return { answer: answered.answer, citedSegments: answered.citedSegments, citedNotes: answered.citedNotes, sessionId }
      // The conversation this key opened answered another question: the key names that request.
      if (!givenSession) {
        throw new DomainError('invalid_state', 'This Idempotency-Key was already used for another question; send a new key with a new question.', { current: 'answered' })
      }
    }
    const charged = await this.deps.credits.charge(caller.accountId, { ...charge, requestId: caller.requestId, chargeId, pending: true })
    // The ledger has seen this charge but no answer was recorded: the first attempt is still
    // running, or failed and was refunded. Never an answer on a charge paid back (or not yet
    // settled): the client retries later, or with a new key.
    if (charged.events.length === 0) {
      throw new DomainError('invalid_state', 'A request with this Idempotency-Key is still running or has failed; retry shortly, or send a new key.', { current: 'processing' })
    }
    // Nothing answered, nothing paid: a failure is refunded by the refund process manager.
    return this.deps.credits.settlePending(caller.accountId, [chargeId], async () => {
      // On the free plan the model reads (and quotes) only what the preview shows: more hits are
      // asked for, those past the preview left out, so it still gets PASSAGES of them.
      const preview = transcriptPreviewFor(caller.plan)
      const hits = await this.deps.segments.search({ accountId: caller.accountId, ...(noteId ? { noteId } : {}), weights: queryWeights(question, history), limit: preview ? PASSAGES * 8 : PASSAGES })
      const readable = (await this.deps.segments.texts(caller.accountId, hits, preview)).slice(0, PASSAGES)
      const passages: Passage[] = readable.map((s) => ({
        ...s,
        label: noteId ? `[${mmss(s.startMs)}]` : `[${labelTitle(s.noteTitle)} | ${mmss(s.startMs)}]`,
      }))
      let drafted: Awaited<ReturnType<LanguageEngine['answer']>>
      try {
        drafted = await this.deps.engine.answer({ question, scope: noteId ? 'note' : 'library', passages, history: history.map((t) => ({ question: t.question, answer: t.answer })) })
      } catch (err) {
        if (err instanceof LanguageEngineError) throw new DomainError('chat_failed', `The model did not answer (${err.message}); the credits were refunded.`)
        throw err
      }
      const byId = new Map(passages.map((p) => [p.segmentId, p]))
      const cited = drafted.draft.citedSegments.filter((id, i, all) => byId.has(id) && all.indexOf(id) === i)
      const citedNotes: CitedNote[] = []
      for (const id of cited) {
        const p = byId.get(id)!
        if (!citedNotes.some((n) => n.noteId === p.noteId)) citedNotes.push({ noteId: p.noteId, title: p.noteTitle })
      }
      await this.deps.handler.handle(
        askStream.of(sessionId),
        {
          type: 'RecordAnswer',
          sessionId,
          accountId: caller.accountId,
          noteId,
          question,
          answer: drafted.draft.answer,
          citedSegments: cited,
          citedNotes,
          ...drafted.info,
          chargeId,
          now: this.clock().toISOString(),
        },
        askDecider,
        { metadata: { requestId: caller.requestId, accountId: caller.accountId } },
      )
      return { answer: drafted.draft.answer, citedSegments: cited, citedNotes, sessionId }
    })
  }
}
