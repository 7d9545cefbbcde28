// The transcription job's commands, used by the workers: claim (at the expected revision, so one
// worker wins), report progress (which renews the lease), describe the source, capture the
// import's price, complete, fail, and settle a failed note's credits and minutes. Each is a
// decision of the note stream's pipeline decider (domain/notes/transcriptionDecider.ts).
import { isDomainError } from '../domain/errors.ts'
import { uuidFromName } from '../domain/ids.ts'
import { noteStream, type NoteState } from '../domain/notes/note.ts'
import type { LeaseTerms, TranscriptionCommand, PipelineStage } from '../domain/notes/transcriptionJob.ts'
import { transcriptionDecider } from '../domain/notes/transcriptionDecider.ts'
import type { Transcript } from '../domain/notes/transcript.ts'
import { minutesFor, shownSeconds, usageDecider, usageStream } from '../domain/usage/usage.ts'
import { PRICES, PUBLISHED_TRANSCRIPT_CREDITS } from '../domain/credits/prices.ts'
import { PLAN_LIMITS } from '../domain/credits/plans.ts'
import { getIn } from '../domain/shardedMap.ts'
import { PipelineFailure } from '../ports/pipelineFailure.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'

export type ExistingNote = Extract<NoteState, { exists: true }>

/** The import price: 50 credits per started minute of audio. */
export const importCost = (durationSeconds: number): number => PRICES.import.credits * minutesFor(durationSeconds)

export type ClaimResult = { kind: 'claimed'; attempt: number; note: ExistingNote } | { kind: 'failed'; note: ExistingNote } | { kind: 'skipped'; reason: string }

export interface Lease {
  noteId: string
  workerId: string
  attempt: number
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError'
}

export class TranscriptionJobs {
  constructor(
    private readonly handler: CommandHandler,
    private readonly credits: CreditCommands,
    private readonly terms: LeaseTerms,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  private now = () => this.clock().toISOString()

  private async run(noteId: string, command: TranscriptionCommand, workerId?: string) {
    return this.handler.handle(noteStream.of(noteId), command, transcriptionDecider, { metadata: workerId ? { workerId } : {} })
  }

  /** Claims the note's job, or turns it into its failure when the attempts are used up. */
  async claim(noteId: string, workerId: string): Promise<ClaimResult> {
    try {
      const r = await this.run(noteId, { type: 'ClaimTranscription', workerId, terms: this.terms, now: this.now() }, workerId)
      const note = r.state as ExistingNote
      if (r.events.some((e) => e.type === 'NoteFailed')) return { kind: 'failed', note }
      return { kind: 'claimed', attempt: note.job!.attempt, note }
    } catch (err) {
      if (isDomainError(err) && (err.code === 'conflict' || err.code === 'not_found')) return { kind: 'skipped', reason: err.message }
      throw err
    }
  }

  private async asHolder<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      if (isDomainError(err) && err.code === 'conflict') throw new LeaseLostError(err.message)
      throw err
    }
  }

  /** Progress, which also renews the lease. Throws LeaseLostError when another attempt took over. */
  progress(lease: Lease, stage: PipelineStage, percent: number | null) {
    return this.asHolder(() =>
      this.run(lease.noteId, { type: 'ReportProgress', workerId: lease.workerId, attempt: lease.attempt, stage, percent, terms: this.terms, now: this.now() }, lease.workerId),
    )
  }

  describe(lease: Lease, meta: { title?: string; description?: string | null; recordedAt?: string | null; durationSeconds?: number | null }) {
    return this.asHolder(() => this.run(lease.noteId, { type: 'DescribeSource', workerId: lease.workerId, attempt: lease.attempt, ...meta, now: this.now() }, lease.workerId))
  }

  /** Counts an import's kept media against the account's storage quota; false when it does not fit. */
  async allocateStorage(note: ExistingNote, bytes: number): Promise<boolean> {
    const { state } = await this.credits.state(note.accountId)
    try {
      await this.handler.handle(
        usageStream.of(note.accountId),
        { type: 'AllocateStorage', noteId: note.noteId, bytes, quota: PLAN_LIMITS[state.plan].storageBytes, now: this.now() },
        usageDecider,
      )
      return true
    } catch (err) {
      if (isDomainError(err) && err.code === 'file_too_large') return false
      throw err
    }
  }

  recordAudio(lease: Lease, audio: { blobKey: string; sizeBytes: number; contentType: string }) {
    return this.asHolder(() => this.run(lease.noteId, { type: 'RecordAudio', workerId: lease.workerId, attempt: lease.attempt, ...audio, now: this.now() }, lease.workerId))
  }

  /** `decodedSeconds`: the length of the audio that was decoded (its sample count), recorded for the auditor; null for a published transcript. */
  complete(lease: Lease, transcript: Transcript, durationSeconds: number | null, language: string | null, decodedSeconds: number | null = null) {
    return this.asHolder(() =>
      this.run(
        lease.noteId,
        { type: 'CompleteTranscription', workerId: lease.workerId, attempt: lease.attempt, transcript, durationSeconds, language, decodedSeconds, now: this.now() },
        lease.workerId,
      ),
    )
  }

  /**
   * Counts an upload's minutes for the audio it really holds, when that is more than finalize
   * counted from the file's header; quota_exceeded when the month has no room for the rest.
   */
  async reserveMinutes(note: ExistingNote, durationSeconds: number): Promise<void> {
    const { state } = await this.credits.state(note.accountId)
    const minutes = minutesFor(durationSeconds)
    try {
      await this.handler.handle(usageStream.of(note.accountId), { type: 'ReserveMinutes', noteId: note.noteId, minutes, quota: PLAN_LIMITS[state.plan].monthlyMinutes, now: this.now() }, usageDecider)
    } catch (err) {
      if (isDomainError(err) && err.code === 'quota_exceeded') throw new PipelineFailure('quota_exceeded', `This audio lasts ${shownSeconds(durationSeconds)} s (${minutes} minutes), more than its file said; ${err.message}`)
      throw err
    }
  }

  /** Records a failed attempt: retried later when `retriable` and attempts remain, otherwise the note fails. */
  async fail(lease: Lease, failure: { errorCode: string; message: string; retriable: boolean }): Promise<'retry' | 'failed'> {
    const r = await this.asHolder(() =>
      this.run(lease.noteId, { type: 'FailTranscription', workerId: lease.workerId, attempt: lease.attempt, ...failure, message: failure.message.slice(0, 1000), terms: this.terms, now: this.now() }, lease.workerId),
    )
    return r.events.some((e) => e.type === 'NoteFailed') ? 'failed' : 'retry'
  }

  /** Hands the attempt back (the worker is stopping): claimable at once, and it does not count. */
  release(lease: Lease, reason: string) {
    return this.asHolder(() => this.run(lease.noteId, { type: 'ReleaseTranscription', workerId: lease.workerId, attempt: lease.attempt, reason, now: this.now() }, lease.workerId))
  }

  /**
   * Holds the import's real price once the duration is known (the hold made at import grows to
   * it); the transcription then runs on held credits and `capture` takes them at the end. When
   * the balance cannot cover it, PipelineFailure insufficient_credits. A retried attempt whose
   * price was captured already changes nothing.
   */
  async hold(note: ExistingNote, durationSeconds: number, opts: { published?: boolean } = {}): Promise<number> {
    if (!note.reservationId) return 0
    const cost = opts.published ? PUBLISHED_TRANSCRIPT_CREDITS : importCost(durationSeconds)
    const { state } = await this.credits.state(note.accountId)
    if (getIn(state.closedReservations, note.reservationId) === 'captured') return cost
    try {
      await this.credits.extend(note.accountId, note.reservationId, cost, `${shownSeconds(durationSeconds)} s of audio at 50 per started minute`)
    } catch (err) {
      if (isDomainError(err) && err.code === 'insufficient_credits') {
        throw new PipelineFailure('insufficient_credits', `This audio lasts ${shownSeconds(durationSeconds)} s and costs ${cost} credits (50 per started minute); ${String(err.extra.balance)} are available.`)
      }
      throw err
    }
    return cost
  }

  /**
   * Captures the import's price when the transcript is complete (idempotent: the reservation id
   * is the note's): 50 per started minute, or the flat price of a published transcript.
   */
  async capture(note: ExistingNote, durationSeconds: number, opts: { published?: boolean } = {}): Promise<number> {
    if (!note.reservationId) return 0
    const cost = opts.published ? PUBLISHED_TRANSCRIPT_CREDITS : importCost(durationSeconds)
    try {
      await this.credits.capture(note.accountId, note.reservationId, cost)
    } catch (err) {
      if (isDomainError(err) && err.code === 'insufficient_credits') {
        throw new PipelineFailure('insufficient_credits', `This audio lasts ${shownSeconds(durationSeconds)} s and costs ${cost} credits (50 per started minute); ${String(err.extra.balance)} are available.`)
      }
      throw err
    }
    return cost
  }

  /**
   * Gives back what a failed note holds: the import's reservation (released) or its captured
   * price (refunded, once: the refund id is derived from the note), and an upload's minutes.
   * Idempotent, and recorded on the note by `TranscriptionSettled`, so a worker that dies halfway
   * leaves the settlement to the next one.
   */
  async settle(noteId: string): Promise<void> {
    const { state } = await this.handler.load(noteStream.of(noteId), transcriptionDecider)
    if (!state.exists || state.phase !== 'failed' || !state.job || state.job.settled) return
    const reason = `transcription failed: ${state.errorCode ?? 'unknown'}`
    let credits: 'none' | 'released' | 'refunded' = 'none'
    let creditsReturned = 0
    if (state.reservationId) {
      const id = state.reservationId
      const { state: ledger } = await this.credits.state(state.accountId)
      const hold = ledger.reservations[id]
      const charged = getIn(ledger.refundable, id)
      if (hold) {
        await this.credits.release(state.accountId, id, reason)
        credits = 'released'
        creditsReturned = hold.amount
      } else if (getIn(ledger.closedReservations, id) === 'captured' && charged) {
        await this.credits.refund(state.accountId, id, reason, uuidFromName(`refund:${noteId}`, id))
        credits = 'refunded'
        creditsReturned = charged.amount
      }
    }
    let minutesReleased = false
    if (state.sourceType === 'upload') {
      const r = await this.handler.handle(usageStream.of(state.accountId), { type: 'ReleaseMinutes', noteId, reason, now: this.now() }, usageDecider)
      minutesReleased = r.events.length > 0
    }
    await this.run(noteId, { type: 'SettleTranscription', credits, creditsReturned, minutesReleased, now: this.now() })
  }

  load(noteId: string) {
    return this.handler.load(noteStream.of(noteId), transcriptionDecider)
  }
}
