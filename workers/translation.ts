// The translation worker: takes queued translations from the `translations` read model, claims
// one by appending TranslationStarted (the decider lets only one worker claim it; a run left
// `running` by a dead worker is taken over after the lease), translates the segments that lack a
// translation of their current text in batches (each batch an event, so progress shows), and
// completes or fails it. Never a made-up translation: an engine that cannot do the pair fails
// the translation with an errorCode that says what to configure.
import { isDomainError } from '../domain/errors.ts'
import { noteStream } from '../domain/notes/note.ts'
import { missingSegments, noteTranscriptDecider, sourceHash, type TranscriptCommand } from '../domain/notes/noteTranscript.ts'
import type { TranslationLanguage } from '../domain/languages.ts'
import { unsupportedPair } from '../domain/transcripts/translationPairs.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { TranslationError, type Translator } from '../ports/translator.ts'
import { TRANSLATIONS, type TranslationDoc } from '../projections/translations.ts'
import type { CommandHandler } from '../commands/handleCommand.ts'

type Without<C, K extends string> = C extends unknown ? Omit<C, K> : never

export interface TranslationWorkerOptions {
  handler: CommandHandler
  docs: DocumentStore
  translator: () => Promise<Translator>
  clock?: () => Date
  /** How often the queue is looked at without a wake-up. */
  pollMs?: number
  /** After this long a `running` translation is considered abandoned. */
  leaseMs?: number
  /** Segments per progress event. */
  batchSize?: number
  log?: (msg: string, err?: unknown) => void
}

export interface TranslationWorker {
  readonly name: string
  wake(): void
  /** Resolves when the queue had nothing to do at least once after the call (tests). */
  idle(): Promise<void>
  stop(): Promise<void>
}

export function startTranslationWorker(options: TranslationWorkerOptions): TranslationWorker {
  const clock = options.clock ?? (() => new Date())
  const pollMs = options.pollMs ?? 500
  const leaseMs = options.leaseMs ?? 10 * 60_000
  const batchSize = options.batchSize ?? 50
  const log = options.log ?? ((msg, err) => console.error(`[translation-worker] ${msg}`, err ?? ''))
  const ac = new AbortController()
  let wakeUp: (() => void) | null = null
  let idleWaiters: (() => void)[] = []

  const append = (noteId: string, c: Without<TranscriptCommand, 'now'>) =>
    options.handler.handle(noteStream.of(noteId), { ...c, now: clock().toISOString() } as TranscriptCommand, noteTranscriptDecider, { metadata: { actor: 'translation-worker' } })

  /** True when this worker claimed the job (so the queue may hold more right away). */
  async function process(job: TranslationDoc): Promise<boolean> {
    const translator = await options.translator()
    const language = job.language as TranslationLanguage
    let claimed
    try {
      claimed = await append(job.noteId, { type: 'StartTranslation', language, engine: translator.engine, model: translator.model, leaseMs })
    } catch (err) {
      if (isDomainError(err)) return false // another worker has it, or it is no longer queued
      throw err
    }
    const state = claimed.state
    if (!state.exists || !state.transcript) return true
    const t = state.translations[language]
    const from = t?.sourceLanguage ?? null
    try {
      // Refused when requested already; checked again here, as this worker's engine may differ
      // from the one of the process that took the request.
      const problem = unsupportedPair(translator.capability, from, language)
      if (problem) throw new TranslationError(translator.engine === 'none' ? 'translation_engine_unavailable' : 'translation_pair_unsupported', problem)
      const todo = new Set(missingSegments(state.transcript, t))
      const segments = state.transcript.segments.filter((s) => todo.has(s.sequence)).sort((a, b) => a.sequence - b.sequence)
      for (let i = 0; i < segments.length && !ac.signal.aborted; i += batchSize) {
        const batch = segments.slice(i, i + batchSize)
        const hashes = new Map(batch.map((s) => [s.sequence, sourceHash(s.text)]))
        const out = await translator.translate({ from, to: language, segments: batch.map((s) => ({ sequence: s.sequence, text: s.text })), signal: ac.signal })
        await append(job.noteId, {
          type: 'RecordTranslatedSegments',
          language,
          segments: out.filter((x) => hashes.has(x.sequence)).map((x) => ({ sequence: x.sequence, text: x.text, sourceHash: hashes.get(x.sequence)! })),
        })
      }
      if (ac.signal.aborted) return true // stopped: the lease lets the next worker finish it
      await append(job.noteId, { type: 'CompleteTranslation', language })
    } catch (err) {
      if (ac.signal.aborted) return true
      const errorCode = err instanceof TranslationError ? err.errorCode : 'translation_engine_failed'
      const message = err instanceof Error ? err.message : String(err)
      await append(job.noteId, { type: 'FailTranslation', language, errorCode, message })
    }
    return true
  }

  async function pass(): Promise<number> {
    const col = options.docs.collection<TranslationDoc>(TRANSLATIONS)
    const abandonedBefore = new Date(clock().getTime() - leaseMs).toISOString()
    const jobs = [
      ...(await col.find({ status: 'pending' }, { sort: { updatedAt: 1 }, limit: 20 })),
      ...(await col.find({ status: 'running', startedAt: { $lt: abandonedBefore } }, { sort: { updatedAt: 1 }, limit: 5 })),
    ]
    let claimed = 0
    for (const job of jobs) {
      if (ac.signal.aborted) break
      try {
        if (await process(job)) claimed++
      } catch (err) {
        log(`translation ${job._id} failed unexpectedly`, err)
      }
    }
    return claimed
  }

  const loop = (async () => {
    while (!ac.signal.aborted) {
      let found = 0
      try {
        found = await pass()
      } catch (err) {
        if (!ac.signal.aborted) log('queue read failed', err)
      }
      if (found === 0) {
        const waiters = idleWaiters
        idleWaiters = []
        for (const w of waiters) w()
      }
      if (found > 0) continue
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs)
        function done() {
          clearTimeout(timer)
          wakeUp = null
          ac.signal.removeEventListener('abort', done)
          resolve()
        }
        wakeUp = done
        ac.signal.addEventListener('abort', done)
      })
    }
  })()

  return {
    name: 'translations',
    wake: () => wakeUp?.(),
    idle: () => new Promise<void>((resolve) => idleWaiters.push(resolve)),
    async stop() {
      ac.abort()
      await loop
    },
  }
}
