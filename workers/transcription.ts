// The transcription worker: finds due jobs in the job-queue read model, claims one on the note
// stream (the claim is what counts, not the read model), and runs the pipeline:
//
//   source (download / feed / directory / video site, or the uploaded blob)
//   -> decode (ffprobe: duration, tracks; a subtitle track inside the file is a published transcript)
//   -> capture the import's price (50 credits per started minute) now that the duration is known
//   -> published transcript, or: 16 kHz mono PCM -> speech activity (no speech: the note fails
//      with `no_speech`, refunded) -> speech engine -> diarizer, when the engine named no speakers
//   -> non-speech tags removed, speaker labels -> NoteTranscribed + NoteReady
//
// Progress is appended (throttled) and renews the lease; a heartbeat renews it during long
// stages. A failure is retried with backoff while attempts remain (when it is a passing one),
// otherwise the note fails with its errorCode and its credits and minutes are given back.
import { randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdtemp, open, rm, readFile, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { shownSeconds } from '../domain/usage/usage.ts'
import { assembleTranscript, type RawSegment } from '../domain/notes/assemble.ts'
import { parseVtt } from '../domain/notes/captions.ts'
import { normalizeLanguage, languageHint, detectTextLanguage } from '../domain/languages.ts'
import { classifySourceUrl } from '../domain/notes/sourceUrl.ts'
import { mediaTypeOf } from '../domain/notes/sniff.ts'
import { NOTE_ERROR_CODES, type PipelineStage } from '../domain/notes/transcriptionJob.ts'
import { DEFAULT_MAX_DURATION_SECONDS, PLAN_LIMITS, durationLimitMessage, type Plan } from '../domain/credits/plans.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { MediaProbe, MediaInfo } from '../ports/mediaProbe.ts'
import type { MediaTool } from '../ports/mediaTool.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'
import type { Diarizer, SpeechActivity } from '../ports/diarizer.ts'
import { withoutNonSpeech } from '../domain/notes/nonSpeech.ts'
import { startsFromSpeech } from '../domain/notes/speechTiming.ts'
import { speechBySpeaker } from '../domain/notes/speakerSpeech.ts'
import { isPipelineFailure, PipelineFailure } from '../ports/pipelineFailure.ts'
import type { Recognition, RecognizedSegment } from '../ports/speechEngine.ts'
import { chunkSpans, fairOrder, type Span } from '../domain/notes/scheduling.ts'
import { pcm16MonoLayout, wavFromPcm } from '../domain/audio/pcm.ts'
import { FairTurns } from './turns.ts'
import { LeaseLostError, type ExistingNote, type Lease, type TranscriptionJobs } from '../commands/transcription.ts'
import type { CreditCommands } from '../commands/credits.ts'
import { TRANSCRIPTION_JOBS, type TranscriptionJobDoc } from '../projections/transcriptionJobs.ts'
import type { Sources, FetchedSource, PublishedTranscript } from './sources.ts'
import { metrics } from '../ports/metrics.ts'
import { carrierOf, inSpan, withCausation } from '../ports/tracing.ts'

export interface TranscriptionWorkerConfig {
  workerId?: string
  /**
   * Recognitions run at once in this process (turns at the engine). One more job may be claimed
   * meanwhile, for an account with nothing running, so it waits for the next turn instead of the
   * end of a long job.
   */
  concurrency: number
  /** Audio longer than this is recognized in chunks of about this length, the job yielding its turn between them; 0 or absent: whole. */
  chunkSeconds?: number
  pollMs: number
  leaseMs: number
  /** Minimum time between two progress events of one job (stage changes always go out). */
  progressIntervalMs: number
  /** Scratch space for downloads and decoded audio. */
  workDir?: string
  /** Download cap below the plan's file size limit (IMPORT_MAX_BYTES), or null. */
  maxDownloadBytes?: number | null
  /** The longest audio a note may have, per plan (PLAN_MAX_DURATION_MINUTES). */
  maxDurationSeconds?: Readonly<Record<Plan, number>>
}

export interface TranscriptionWorkerDeps {
  jobs: TranscriptionJobs
  credits: CreditCommands
  docs: DocumentStore
  blobs: BlobStore
  probe: MediaProbe
  media: MediaTool
  sources: Sources
  /** The configured engine; null when none is (notes then fail with asr_model_missing). */
  engine: SpeechEngine
  /** Who spoke when, for engines that do not say; null: transcripts keep the engine's speakers (or none). */
  diarizer?: Diarizer | null
  /** Finds audio with nothing to hear before recognition is spent on it; null: only an empty transcript tells. */
  activity?: SpeechActivity | null
  config: TranscriptionWorkerConfig
  clock?: () => Date
  log?: (msg: string) => void
}

export interface RunningTranscriptionWorker {
  readonly name: string
  readonly workerId: string
  stop(): Promise<void>
  /** Runs one poll now (tests). */
  poke(): void
}

export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })

export function startTranscriptionWorker(deps: TranscriptionWorkerDeps): RunningTranscriptionWorker {
  const workerId = deps.config.workerId ?? `worker-${randomUUID().slice(0, 8)}`
  const clock = deps.clock ?? (() => new Date())
  const log = deps.log ?? (() => {})
  const stopping = new AbortController()
  // The reason a job's signal carries when the worker stops: such a job is handed back, not failed.
  const STOPPING = new LeaseLostError('the worker is stopping')
  /** Rejects when the job's signal says the worker stops (never otherwise). */
  const stopped = (signal: AbortSignal) =>
    new Promise<never>((_, reject) => {
      if (signal.reason === STOPPING) return reject(STOPPING)
      signal.addEventListener('abort', () => signal.reason === STOPPING && reject(STOPPING), { once: true })
    })
  const running = new Map<string, { done: Promise<void>; accountId: string }>()
  const turns = new FairTurns(deps.config.concurrency)
  const claimLimit = deps.config.concurrency + 1
  let wake: () => void = () => {}

  const loop = async () => {
    while (!stopping.signal.aborted) {
      try {
        await tick()
      } catch (err) {
        log(`[transcription ${workerId}] poll failed: ${(err as Error).message}`)
      }
      await Promise.race([sleep(deps.config.pollMs, stopping.signal), new Promise<void>((r) => (wake = r))])
    }
  }

  async function tick() {
    if (running.size >= claimLimit) return
    const now = clock().toISOString()
    const queue = deps.docs.collection<TranscriptionJobDoc>(TRANSCRIPTION_JOBS)
    const due = await queue.find({ dueAt: { $lte: now } }, { sort: { dueAt: 1, _id: 1 }, limit: 100 })
    // A job's claim and work are caused by the event that queued it, and continue its trace.
    const causes = new Map(due.map((j) => [j._id, j.cause]))
    const inCause = <T>(id: string, fn: () => T): T => {
      const c = causes.get(id)
      return c ? withCausation({ correlationId: c.correlationId, causationId: c.causationId, trace: carrierOf(c) }, fn) : fn()
    }
    for (const job of due) {
      if (stopping.signal.aborted) return
      if (job.status === 'settling') await deps.jobs.settle(job._id)
    }
    // Jobs running anywhere (live leases in the queue, and this worker's own), per account.
    const busy = new Map<string, string>()
    for (const r of await queue.find({ status: 'running', dueAt: { $gt: now } }, { limit: 1000, projection: { accountId: 1 } })) busy.set(r._id, r.accountId)
    for (const [id, r] of running) busy.set(id, r.accountId)
    const runningByAccount = new Map<string, number>()
    for (const accountId of busy.values()) runningByAccount.set(accountId, (runningByAccount.get(accountId) ?? 0) + 1)
    const candidates = due.filter((j) => j.status !== 'settling' && !running.has(j._id)).map((j) => ({ id: j._id, accountId: j.accountId, dueAt: j.dueAt }))
    for (const job of fairOrder(candidates, runningByAccount)) {
      if (stopping.signal.aborted || running.size >= claimLimit) return
      // The slot beyond `concurrency` is for an account with nothing running: its job waits for
      // the next turn at the engine (a chunk of a long job at most), not for the long job's end.
      if (running.size >= deps.config.concurrency && (runningByAccount.get(job.accountId) ?? 0) > 0) continue
      const claim = await inCause(job.id, () => deps.jobs.claim(job.id, workerId))
      if (claim.kind === 'failed') {
        log(`[transcription ${workerId}] note ${job.id} out of attempts: ${claim.note.errorCode}`)
        await deps.jobs.settle(job.id)
        continue
      }
      if (claim.kind !== 'claimed') continue
      runningByAccount.set(job.accountId, (runningByAccount.get(job.accountId) ?? 0) + 1)
      const lease: Lease = { noteId: job.id, workerId, attempt: claim.attempt }
      const cause = causes.get(job.id)
      const note = claim.note
      const p = inCause(job.id, () =>
        inSpan('transcription job', { kind: 'consumer', parent: cause ? carrierOf(cause) : null, attributes: { 'notes.note_id': lease.noteId, 'notes.attempt': lease.attempt, 'notes.worker_id': workerId } }, () => runJob(lease, note)),
      )
        // The job's own failure handling failed (store unreachable...): its lease will run out and
        // another attempt will follow; nothing to do here but say so.
        .catch((err) => log(`[transcription ${workerId}] note ${lease.noteId} attempt ${lease.attempt} left to its lease: ${(err as Error).message}`))
        .finally(() => {
          running.delete(job.id)
          wake()
        })
      running.set(job.id, { done: p, accountId: claim.note.accountId })
    }
  }

  async function runJob(lease: Lease, note: ExistingNote) {
    const abort = new AbortController()
    const stopListener = () => abort.abort(STOPPING)
    stopping.signal.addEventListener('abort', stopListener, { once: true })
    let stage: PipelineStage = note.sourceType === 'url' ? 'downloading' : 'decoding'
    let percent: number | null = null
    let lastSent = 0
    let sending: Promise<unknown> = Promise.resolve()
    const send = () => {
      lastSent = Date.now()
      const s = stage
      const p = percent
      sending = sending
        .then(() => deps.jobs.progress(lease, s, p))
        .catch((err) => {
          if (err instanceof LeaseLostError) abort.abort(err)
          else log(`[transcription ${workerId}] progress of ${lease.noteId} not recorded: ${(err as Error).message}`)
        })
    }
    const progress = (next: PipelineStage, pct: number | null) => {
      const changed = next !== stage
      stage = next
      percent = pct === null ? null : Math.max(0, Math.min(100, Math.round(pct)))
      if (changed || Date.now() - lastSent >= deps.config.progressIntervalMs) send()
    }
    // Renews the lease while a long stage reports nothing.
    const heartbeat = setInterval(() => {
      if (Date.now() - lastSent >= deps.config.leaseMs / 3) send()
    }, Math.max(20, Math.floor(deps.config.leaseMs / 6)))
    const workDir = await mkdtemp(join(deps.config.workDir ?? tmpdir(), `job-${lease.noteId.slice(0, 8)}-`))
    try {
      const work = pipeline(lease, note, { workDir, signal: abort.signal, progress })
      // An engine that cannot be interrupted at once (whisper.cpp in this process finishes its
      // window first) must not hold up a stop: the attempt is handed back now, and whatever that
      // work writes later is refused (the attempt is no longer held).
      work.catch(() => {})
      await Promise.race([work, stopped(abort.signal)])
      await sending
      metrics().transcriptionJobs.inc({ outcome: 'succeeded' })
    } catch (err) {
      await sending
      if (abort.signal.reason === STOPPING) {
        // Stopping (SIGTERM, a deploy): the attempt goes back at once, so the next worker (or this
        // one after its restart) takes it without waiting for the lease to run out.
        try {
          await deps.jobs.release(lease, `worker ${workerId} stopped`)
          log(`[transcription ${workerId}] stopping: handed back ${lease.noteId} attempt ${lease.attempt} (at ${stage}); another worker takes it at once`)
        } catch (e) {
          log(`[transcription ${workerId}] stopping: ${lease.noteId} attempt ${lease.attempt} left to its lease: ${(e as Error).message}`)
        }
        return
      }
      if (err instanceof LeaseLostError || abort.signal.reason instanceof LeaseLostError) {
        log(`[transcription ${workerId}] gave up ${lease.noteId} attempt ${lease.attempt}: ${(abort.signal.reason as Error | undefined)?.message ?? (err as Error).message}`)
        return
      }
      const failure = toFailure(err)
      if (failure.errorCode === 'internal_error') log(`[transcription ${workerId}] note ${lease.noteId} attempt ${lease.attempt}: ${(err as Error).stack ?? String(err)}`)
      try {
        const outcome = await deps.jobs.fail(lease, failure)
        metrics().transcriptionJobs.inc({ outcome: failure.errorCode })
        if (outcome === 'failed') await deps.jobs.settle(lease.noteId)
      } catch (e) {
        if (!(e instanceof LeaseLostError)) throw e
      }
    } finally {
      clearInterval(heartbeat)
      stopping.signal.removeEventListener('abort', stopListener)
      await rm(workDir, { recursive: true, force: true })
    }
  }

  interface Ctx {
    workDir: string
    signal: AbortSignal
    progress: (stage: PipelineStage, percent: number | null) => void
  }

  async function pipeline(lease: Lease, note: ExistingNote, ctx: Ctx) {
    const check = () => {
      if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new LeaseLostError('stopped')
    }
    const maxBytes = PLAN_LIMITS.power.maxFileBytes
    let source: FetchedSource
    if (note.sourceType === 'url' && note.sourceUrl) {
      source = await deps.sources.fetch(note.provider, note.sourceUrl, { ...ctx, maxBytes: await planMaxBytes(note, maxBytes) })
      check()
      return process(lease, note, source, ctx)
    }
    if (!note.received) throw new PipelineFailure('unsupported_media', 'The upload has no stored bytes.')
    return deps.blobs.withLocalFile(note.received.blobKey, (path) => process(lease, note, { mediaPath: path, published: null, meta: {} }, ctx))
  }

  /** The longest audio the note's account may have transcribed. */
  async function planMaxSeconds(note: ExistingNote): Promise<{ plan: Plan; maxSeconds: number }> {
    const { state } = await deps.credits.state(note.accountId)
    return { plan: state.plan, maxSeconds: (deps.config.maxDurationSeconds ?? DEFAULT_MAX_DURATION_SECONDS)[state.plan] }
  }

  /** Audio longer than the plan allows fails before its hold grows (uploads are refused at finalize by their probed length). */
  async function refuseTooLong(note: ExistingNote, durationSeconds: number) {
    const { plan, maxSeconds } = await planMaxSeconds(note)
    if (shownSeconds(durationSeconds) > maxSeconds) throw new PipelineFailure('duration_limit_exceeded', durationLimitMessage(plan, durationSeconds, maxSeconds))
  }

  async function planMaxBytes(note: ExistingNote, fallback: number): Promise<number> {
    const cap = deps.config.maxDownloadBytes ?? Infinity
    try {
      const { state } = await deps.credits.state(note.accountId)
      return Math.min(cap, PLAN_LIMITS[state.plan].maxFileBytes)
    } catch {
      return Math.min(cap, fallback)
    }
  }

  /**
   * Keeps an import's downloaded media (uploads keep theirs already) for clips and the player,
   * when the account's storage quota has room. A failure here costs the note nothing.
   */
  async function keepMedia(lease: Lease, note: ExistingNote, mediaPath: string, info: MediaInfo) {
    const blobKey = `media/${note.noteId}`
    try {
      const { size } = await stat(mediaPath)
      if (!(await deps.jobs.allocateStorage(note, size))) return log(`[transcription ${workerId}] note ${note.noteId}: storage quota full, its media is not kept`)
      const handle = await open(mediaPath, 'r')
      const head = Buffer.alloc(4096)
      await handle.read(head, 0, head.length, 0).finally(() => handle.close())
      const contentType = mediaTypeOf(head, info.hasVideo)
      const blob = await deps.blobs.put(blobKey, createReadStream(mediaPath), { contentType, maxBytes: size })
      await deps.jobs.recordAudio(lease, { blobKey, sizeBytes: blob.sizeBytes, contentType })
    } catch (err) {
      if (err instanceof LeaseLostError) throw err
      log(`[transcription ${workerId}] note ${note.noteId}: its media could not be kept: ${(err as Error).message}`)
    }
  }

  async function process(lease: Lease, note: ExistingNote, source: FetchedSource, ctx: Ctx) {
    const check = () => {
      if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new LeaseLostError('stopped')
    }
    let info: MediaInfo | null = null
    let published: PublishedTranscript | null = source.published
    if (source.mediaPath) {
      ctx.progress('decoding', null)
      info = await deps.probe.probe(source.mediaPath)
      if (!info) throw new PipelineFailure('unsupported_media', 'The file is not audio or video we can read.')
      if (!info.hasAudio) throw new PipelineFailure('no_audio', 'The media has no audio track.')
      if (!published && info.subtitleStreams.length > 0) published = await subtitleTrack(source.mediaPath, info, note, ctx)
    }
    check()
    const lastCue = published?.cues.reduce((m, c) => Math.max(m, c.endMs), 0) ?? 0
    let duration = info && info.durationSeconds > 0 ? info.durationSeconds : (source.meta.durationSeconds ?? (lastCue > 0 ? lastCue / 1000 : null))
    if (duration === null) throw new PipelineFailure('unsupported_media', 'The duration of the audio cannot be determined.')

    // The title the source gives replaces only a title we made up from the link.
    const meta = { ...source.meta, durationSeconds: duration }
    if (meta.title && note.sourceUrl && note.title !== classifySourceUrl(note.sourceUrl).fallbackTitle) delete meta.title
    await deps.jobs.describe(lease, meta)
    // A published transcript runs no engine: it costs the import's flat price whatever its length,
    // and the plan's duration limit (a limit on recognition) does not apply to it.
    if (!published) await refuseTooLong(note, duration)
    // Only held now: the price is captured when the transcript is complete, released on failure.
    await deps.jobs.hold(note, duration, { published: published !== null })
    if (note.sourceType === 'url' && source.mediaPath && info) await keepMedia(lease, note, source.mediaPath, info)
    check()

    const forced = note.language
    let segments: RawSegment[]
    let detected: string | null
    let heard: string[] = []
    let engine: string
    let provider: string | null
    let model: string | null
    let speakersAreNames = false
    let speakerConfidence: Record<string, number> | undefined
    let decodedSeconds: number | null = null
    if (published) {
      segments = published.cues.map((c) => ({ startMs: c.startMs, endMs: c.endMs, text: c.text, speaker: c.speaker, confidence: null, words: null }))
      // A feed that names no language: the text tells (null when it does not say clearly).
      detected = published.language ?? detectTextLanguage(published.cues.map((c) => c.text).join(' '))
      engine = 'published'
      provider = published.provider
      model = null
      speakersAreNames = true
    } else {
      const wav = join(ctx.workDir, 'speech.wav')
      // Decoded as the probe read it, and no further than the plan allows (a second past it tells).
      const { maxSeconds } = await planMaxSeconds(note)
      const probed = duration
      const decoded = await deps.media.toSpeechWav(source.mediaPath!, wav, { format: info?.formatName ?? null, maxSeconds: maxSeconds + 1, signal: ctx.signal, onProgress: (s) => ctx.progress('decoding', (s / probed) * 100) })
      check()
      // The header may lie (an MP3 whose Xing/Info frame count is too small): the samples decide
      // the length, and with it the price, the minutes, the plan's limit and the chunking.
      duration = decoded.durationSeconds
      decodedSeconds = decoded.durationSeconds
      if (shownSeconds(decoded.durationSeconds) !== shownSeconds(probed)) {
        log(`[transcription ${workerId}] note ${note.noteId}: the file says ${probed.toFixed(1)} s, its audio lasts ${duration.toFixed(1)} s: priced by the audio`)
        await deps.jobs.describe(lease, { durationSeconds: duration })
        await refuseTooLong(note, duration)
        await deps.jobs.hold(note, duration)
        if (note.sourceType === 'upload') await deps.jobs.reserveMinutes(note, duration)
        check()
      }
      let speech: Span[] | null = null
      if (deps.activity) {
        speech = await deps.activity.detect(wav)
        if (activeMs(speech) < MIN_SPEECH_MS) throw noSpeech()
      }
      // Who speaks when, before recognition when the diarizer can say: the engine then identifies
      // the language per speaker turn; the diarizer reuses these turns afterwards.
      let bySpeaker: Span[] | null = speech
      if (speech && deps.diarizer?.turns) {
        try {
          const found = await deps.diarizer.turns({ wavPath: wav, speakers: note.speakers, signal: ctx.signal })
          if (found.turns.length > 0) bySpeaker = speechBySpeaker(speech, found.turns)
        } catch (err) {
          check()
          log(`[transcription ${workerId}] note ${note.noteId}: speaker turns before recognition failed, languages are identified per pause: ${(err as Error).message}`)
        }
      }
      ctx.progress('transcribing', 0)
      const recognizing = performance.now()
      const r = await recognize(note, wav, duration, speech, languageHint(forced), ctx, bySpeaker)
      check()
      if (duration > 0) metrics().speechRealTimeFactor.observe({ engine: deps.engine.engine }, (performance.now() - recognizing) / 1000 / duration)
      // A language hint holds for every segment (the note's locale, e.g. es-ES, rather than the engine's es).
      segments = withoutNonSpeech(forced ? r.segments.map((x) => ({ ...x, language: null })) : r.segments)
      if (segments.length === 0) throw noSpeech()
      // Words that Whisper stretched back over a pause start where the speech does.
      if (speech) segments = startsFromSpeech(segments, speech)
      detected = normalizeLanguage(r.language)
      heard = (r.languages ?? []).map(normalizeLanguage).filter((l): l is string => l !== null)
      engine = deps.engine.engine
      provider = deps.engine.provider
      model = r.model ?? deps.engine.model
      if (deps.diarizer && segments.every((x) => x.speaker === null)) {
        ctx.progress('diarizing', null)
        const started = Date.now()
        try {
          const diarized = await deps.diarizer.diarize({ wavPath: wav, segments, speakers: note.speakers, signal: ctx.signal })
          segments = diarized.segments
          speakerConfidence = diarized.confidence
          log(`[transcription ${workerId}] note ${note.noteId}: ${diarized.speakerCount} speaker(s) in ${duration.toFixed(0)} s of audio, diarized in ${Date.now() - started} ms`)
        } catch (err) {
          check()
          // The words are worth more than their speakers: the note is ready without them.
          log(`[transcription ${workerId}] note ${note.noteId}: diarization failed, the transcript has no speakers: ${(err as Error).message}`)
        }
        check()
      }
    }
    if (published) segments = withoutNonSpeech(segments)
    const language = normalizeLanguage(forced) ?? detected
    const transcript = assembleTranscript({
      noteId: note.noteId,
      jobId: note.job?.jobId ?? note.jobId ?? '',
      segments,
      speakersAreNames,
      ...(speakerConfidence ? { speakerConfidence } : {}),
      language,
      languagesDetected: heard.length > 0 ? heard : detected ? [detected] : language ? [language] : [],
      durationSeconds: shownSeconds(duration),
      engine,
      provider,
      model,
    })
    ctx.progress('indexing', null)
    // Captured just before the note becomes ready: a crash in between leaves a captured price on
    // a note that is retried (capture is idempotent) or fails (settle refunds it).
    await deps.jobs.capture(note, duration, { published: published !== null })
    await deps.jobs.complete(lease, transcript, shownSeconds(duration), language, decodedSeconds)
  }

  /** One recognition at the engine, in a turn of this job's account. */
  async function inTurn<T>(note: ExistingNote, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const giveBack = await turns.acquire(note.accountId, signal)
    try {
      return await fn()
    } finally {
      giveBack()
    }
  }

  /**
   * The speech engine over the whole WAV, or over chunks of it when it is long (cut in pauses):
   * the job gives its turn back after each chunk, so other accounts' jobs run in between.
   * Times of a chunk's segments and words are shifted to the whole recording.
   */
  async function recognize(note: ExistingNote, wav: string, duration: number, speech: Span[] | null, language: string | null, ctx: Ctx, heard: (Span & { speaker?: number })[] | null = speech): Promise<Recognition> {
    const totalMs = Math.round(duration * 1000)
    const spans = chunkSpans(totalMs, (deps.config.chunkSeconds ?? 0) * 1000, speech ?? [])
    const whole = () =>
      inTurn(note, ctx.signal, () =>
        deps.engine.transcribe({ wavPath: wav, durationSeconds: duration, language, signal: ctx.signal, workDir: ctx.workDir, onProgress: (p) => ctx.progress('transcribing', p), ...(heard ? { speech: heard } : {}) }),
      )
    if (spans.length === 1) return whole()
    const handle = await open(wav, 'r')
    try {
      const head = Buffer.alloc(8192)
      const { bytesRead } = await handle.read(head, 0, head.length, 0)
      const layout = pcm16MonoLayout(head.subarray(0, bytesRead))
      if (!layout) return await whole()
      const parts: { span: Span; r: Recognition }[] = []
      for (const [i, span] of spans.entries()) {
        // A chunk with no speech in it is not sent: nothing to hear, and engines invent text on silence.
        if (speech && activeMs(clip(speech, span)) < MIN_SPEECH_MS) continue
        const from = Math.floor((span.startMs * layout.sampleRate) / 1000)
        const to = Math.floor((span.endMs * layout.sampleRate) / 1000)
        const pcm = Buffer.alloc((to - from) * 2)
        const got = await handle.read(pcm, 0, pcm.length, layout.dataOffset + from * 2)
        const path = join(ctx.workDir, `chunk-${i}.wav`)
        await writeFile(path, wavFromPcm(pcm.subarray(0, got.bytesRead - (got.bytesRead % 2)), layout.sampleRate))
        const seconds = (span.endMs - span.startMs) / 1000
        const r = await inTurn(note, ctx.signal, () =>
          deps.engine.transcribe({
            wavPath: path,
            durationSeconds: seconds,
            language,
            signal: ctx.signal,
            workDir: ctx.workDir,
            onProgress: (p) => ctx.progress('transcribing', ((i + p / 100) / spans.length) * 100),
            ...(heard ? { speech: clipSpeakers(heard, span).map((r) => ({ ...r, startMs: r.startMs - span.startMs, endMs: r.endMs - span.startMs })) } : {}),
          }),
        )
        await rm(path, { force: true })
        parts.push({ span, r })
        ctx.progress('transcribing', ((i + 1) / spans.length) * 100)
      }
      log(`[transcription ${workerId}] note ${note.noteId}: ${Math.round(duration)} s recognized in ${spans.length} chunks (${parts.length} with speech)`)
      return mergeChunks(parts)
    } finally {
      await handle.close()
    }
  }

  /** The media's own subtitle track (the one in the note's language first) as a published transcript. */
  async function subtitleTrack(mediaPath: string, info: MediaInfo, note: ExistingNote, ctx: Ctx): Promise<PublishedTranscript | null> {
    const want = languageHint(note.language)
    const iso3: Record<string, string> = { eng: 'en', spa: 'es', deu: 'de', ger: 'de', fra: 'fr', fre: 'fr', ita: 'it', por: 'pt' }
    const lang = (l: string | null) => (l ? (iso3[l.toLowerCase()] ?? normalizeLanguage(l)) : null)
    const tracks = [...info.subtitleStreams].sort((a, b) => Number(lang(b.language) === want) - Number(lang(a.language) === want))
    for (const t of tracks) {
      const out = join(ctx.workDir, `subs-${t.index}.vtt`)
      try {
        await deps.media.extractSubtitles(mediaPath, t.index, out, { format: info.formatName, signal: ctx.signal })
        const cues = parseVtt(await readFile(out, 'utf8'))
        if (cues.length > 0) return { cues, language: lang(t.language === 'und' ? null : t.language), provider: 'subtitle-track' }
      } catch (err) {
        if (ctx.signal.aborted) throw err
        log(`[transcription ${workerId}] subtitle track ${t.index} (${t.codec}) unusable: ${(err as Error).message}`)
      }
    }
    return null
  }

  const done = loop()
  return {
    name: 'transcription',
    workerId,
    poke: () => wake(),
    async stop() {
      stopping.abort()
      wake()
      await done
      await Promise.allSettled([...running.values()].map((r) => r.done))
    },
  }
}

/** The speech ranges inside a span, with their speakers. */
const clipSpeakers = <R extends Span>(ranges: readonly R[], span: Span): R[] =>
  ranges.filter((r) => r.endMs > span.startMs && r.startMs < span.endMs).map((r) => ({ ...r, startMs: Math.max(r.startMs, span.startMs), endMs: Math.min(r.endMs, span.endMs) }))

/** The speech ranges inside a span. */
const clip = (ranges: readonly Span[], span: Span): Span[] =>
  ranges.filter((r) => r.endMs > span.startMs && r.startMs < span.endMs).map((r) => ({ startMs: Math.max(r.startMs, span.startMs), endMs: Math.min(r.endMs, span.endMs) }))

/**
 * One recognition from its chunks': segments and words shifted to the whole recording; the
 * languages weighted by the speech of the chunks that heard them (a chunk's share split over the
 * languages it names), those under 15 % of the whole dropped, the most heard first.
 */
export function mergeChunks(parts: { span: { startMs: number; endMs: number }; r: Recognition }[]): Recognition {
  const segments: RecognizedSegment[] = []
  const heard = new Map<string, number>()
  for (const { span, r } of parts) {
    const at = span.startMs
    for (const x of r.segments) {
      segments.push({ ...x, startMs: x.startMs + at, endMs: x.endMs + at, words: x.words ? x.words.map((w) => ({ ...w, startMs: w.startMs + at, endMs: w.endMs + at })) : null })
    }
    const spoken = Math.max(1, r.segments.reduce((n, x) => n + (x.endMs - x.startMs), 0))
    const langs = r.languages && r.languages.length > 0 ? r.languages : r.language ? [r.language] : []
    for (const l of langs) heard.set(l, (heard.get(l) ?? 0) + spoken / langs.length)
  }
  const total = [...heard.values()].reduce((a, b) => a + b, 0)
  const languages = [...heard.entries()]
    .filter(([, w]) => w / total >= 0.15)
    .sort((a, b) => b[1] - a[1])
    .map(([l]) => l)
  return { language: languages[0] ?? null, languages, model: parts.find((p) => p.r.model)?.r.model ?? null, segments }
}

/** Less speech than this (ms) in the whole recording is none (a click, a breath). */
const MIN_SPEECH_MS = 250
const activeMs = (ranges: readonly { startMs: number; endMs: number }[]) => ranges.reduce((n, r) => n + (r.endMs - r.startMs), 0)
const noSpeech = () => new PipelineFailure('no_speech', 'No speech was found in the audio (silence, noise or music only); the credits it cost were refunded.')

function toFailure(err: unknown): { errorCode: string; message: string; retriable: boolean } {
  if (isPipelineFailure(err)) return { errorCode: err.errorCode, message: err.message, retriable: err.retriable }
  const e = err as { code?: string; message?: string }
  if (e?.code === 'ENOENT' && /ffmpeg|ffprobe/.test(e.message ?? '')) return { errorCode: 'internal_error', message: 'ffmpeg is not available on this server.', retriable: false }
  return { errorCode: 'internal_error', message: e?.message ?? String(err), retriable: NOTE_ERROR_CODES.internal_error.retriable }
}
