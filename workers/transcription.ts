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
import { mkdtemp, open, rm, readFile, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assembleTranscript, type RawSegment } from '../domain/notes/assemble.ts'
import { parseVtt } from '../domain/notes/captions.ts'
import { normalizeLanguage, languageHint, detectTextLanguage } from '../domain/languages.ts'
import { classifySourceUrl } from '../domain/notes/sourceUrl.ts'
import { mediaTypeOf } from '../domain/notes/sniff.ts'
import { NOTE_ERROR_CODES, type PipelineStage } from '../domain/notes/transcriptionJob.ts'
import { PLAN_LIMITS } from '../domain/credits/plans.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { MediaProbe, MediaInfo } from '../ports/mediaProbe.ts'
import type { MediaTool } from '../ports/mediaTool.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'
import type { Diarizer, SpeechActivity } from '../ports/diarizer.ts'
import { withoutNonSpeech } from '../domain/notes/nonSpeech.ts'
import { isPipelineFailure, PipelineFailure } from '../ports/pipelineFailure.ts'
import { LeaseLostError, type ExistingNote, type Lease, type TranscriptionJobs } from '../commands/transcription.ts'
import type { CreditCommands } from '../commands/credits.ts'
import { TRANSCRIPTION_JOBS, type TranscriptionJobDoc } from '../projections/transcriptionJobs.ts'
import type { Sources, FetchedSource, PublishedTranscript } from './sources.ts'

export interface TranscriptionWorkerConfig {
  workerId?: string
  /** Jobs run at once in this process. */
  concurrency: number
  pollMs: number
  leaseMs: number
  /** Minimum time between two progress events of one job (stage changes always go out). */
  progressIntervalMs: number
  /** Scratch space for downloads and decoded audio. */
  workDir?: string
  /** Download cap below the plan's file size limit (IMPORT_MAX_BYTES), or null. */
  maxDownloadBytes?: number | null
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

export function startTranscriptionWorker(d: TranscriptionWorkerDeps): RunningTranscriptionWorker {
  const workerId = d.config.workerId ?? `worker-${randomUUID().slice(0, 8)}`
  const clock = d.clock ?? (() => new Date())
  const log = d.log ?? (() => {})
  const stopping = new AbortController()
  const running = new Map<string, Promise<void>>()
  let wake: () => void = () => {}

  const loop = async () => {
    while (!stopping.signal.aborted) {
      try {
        await tick()
      } catch (err) {
        log(`[transcription ${workerId}] poll failed: ${(err as Error).message}`)
      }
      await Promise.race([sleep(d.config.pollMs, stopping.signal), new Promise<void>((r) => (wake = r))])
    }
  }

  async function tick() {
    if (running.size >= d.config.concurrency) return
    const now = clock().toISOString()
    const due = await d.docs.collection<TranscriptionJobDoc>(TRANSCRIPTION_JOBS).find({ dueAt: { $lte: now } }, { sort: { dueAt: 1, _id: 1 }, limit: 20 })
    for (const job of due) {
      if (stopping.signal.aborted || running.size >= d.config.concurrency) return
      if (running.has(job._id)) continue
      if (job.status === 'settling') {
        await d.jobs.settle(job._id)
        continue
      }
      const claim = await d.jobs.claim(job._id, workerId)
      if (claim.kind === 'failed') {
        log(`[transcription ${workerId}] note ${job._id} out of attempts: ${claim.note.errorCode}`)
        await d.jobs.settle(job._id)
        continue
      }
      if (claim.kind !== 'claimed') continue
      const lease: Lease = { noteId: job._id, workerId, attempt: claim.attempt }
      const p = runJob(lease, claim.note)
        // The job's own failure handling failed (store unreachable...): its lease will run out and
        // another attempt will follow; nothing to do here but say so.
        .catch((err) => log(`[transcription ${workerId}] note ${lease.noteId} attempt ${lease.attempt} left to its lease: ${(err as Error).message}`))
        .finally(() => {
          running.delete(job._id)
          wake()
        })
      running.set(job._id, p)
    }
  }

  async function runJob(lease: Lease, note: ExistingNote) {
    const abort = new AbortController()
    const stopListener = () => abort.abort(new LeaseLostError('the worker is stopping'))
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
        .then(() => d.jobs.progress(lease, s, p))
        .catch((err) => {
          if (err instanceof LeaseLostError) abort.abort(err)
          else log(`[transcription ${workerId}] progress of ${lease.noteId} not recorded: ${(err as Error).message}`)
        })
    }
    const progress = (next: PipelineStage, pct: number | null) => {
      const changed = next !== stage
      stage = next
      percent = pct === null ? null : Math.max(0, Math.min(100, Math.round(pct)))
      if (changed || Date.now() - lastSent >= d.config.progressIntervalMs) send()
    }
    // Renews the lease while a long stage reports nothing.
    const heartbeat = setInterval(() => {
      if (Date.now() - lastSent >= d.config.leaseMs / 3) send()
    }, Math.max(20, Math.floor(d.config.leaseMs / 6)))
    const workDir = await mkdtemp(join(d.config.workDir ?? tmpdir(), `job-${lease.noteId.slice(0, 8)}-`))
    try {
      await pipeline(lease, note, { workDir, signal: abort.signal, progress })
      await sending
    } catch (err) {
      await sending
      if (err instanceof LeaseLostError || abort.signal.reason instanceof LeaseLostError) {
        log(`[transcription ${workerId}] gave up ${lease.noteId} attempt ${lease.attempt}: ${(abort.signal.reason as Error | undefined)?.message ?? (err as Error).message}`)
        return
      }
      const failure = toFailure(err)
      if (failure.errorCode === 'internal_error') log(`[transcription ${workerId}] note ${lease.noteId} attempt ${lease.attempt}: ${(err as Error).stack ?? String(err)}`)
      try {
        const outcome = await d.jobs.fail(lease, failure)
        if (outcome === 'failed') await d.jobs.settle(lease.noteId)
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
      source = await d.sources.fetch(note.provider, note.sourceUrl, { ...ctx, maxBytes: await planMaxBytes(note, maxBytes) })
      check()
      return process(lease, note, source, ctx)
    }
    if (!note.received) throw new PipelineFailure('unsupported_media', 'The upload has no stored bytes.')
    return d.blobs.withLocalFile(note.received.blobKey, (path) => process(lease, note, { mediaPath: path, published: null, meta: {} }, ctx))
  }

  async function planMaxBytes(note: ExistingNote, fallback: number): Promise<number> {
    const cap = d.config.maxDownloadBytes ?? Infinity
    try {
      const { state } = await d.credits.state(note.accountId)
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
      if (!(await d.jobs.allocateStorage(note, size))) return log(`[transcription ${workerId}] note ${note.noteId}: storage quota full, its media is not kept`)
      const handle = await open(mediaPath, 'r')
      const head = Buffer.alloc(4096)
      await handle.read(head, 0, head.length, 0).finally(() => handle.close())
      const contentType = mediaTypeOf(head, info.hasVideo)
      const blob = await d.blobs.put(blobKey, createReadStream(mediaPath), { contentType, maxBytes: size })
      await d.jobs.recordAudio(lease, { blobKey, sizeBytes: blob.sizeBytes, contentType })
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
      info = await d.probe.probe(source.mediaPath)
      if (!info) throw new PipelineFailure('unsupported_media', 'The file is not audio or video we can read.')
      if (!info.hasAudio) throw new PipelineFailure('no_audio', 'The media has no audio track.')
      if (!published && info.subtitleStreams.length > 0) published = await subtitleTrack(source.mediaPath, info, note, ctx)
    }
    check()
    const lastCue = published?.cues.reduce((m, c) => Math.max(m, c.endMs), 0) ?? 0
    const duration = info && info.durationSeconds > 0 ? info.durationSeconds : (source.meta.durationSeconds ?? (lastCue > 0 ? lastCue / 1000 : null))
    if (duration === null) throw new PipelineFailure('unsupported_media', 'The duration of the audio cannot be determined.')

    // The title the source gives replaces only a title we made up from the link.
    const meta = { ...source.meta, durationSeconds: duration }
    if (meta.title && note.sourceUrl && note.title !== classifySourceUrl(note.sourceUrl).fallbackTitle) delete meta.title
    await d.jobs.describe(lease, meta)
    // No engine runs on a published transcript: it costs the import's flat price, whatever its length.
    await d.jobs.capture(note, duration, { published: published !== null })
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
      await d.media.toSpeechWav(source.mediaPath!, wav, { signal: ctx.signal, onProgress: (s) => ctx.progress('decoding', (s / duration) * 100) })
      check()
      if (d.activity) {
        const speech = await d.activity.detect(wav)
        if (activeMs(speech) < MIN_SPEECH_MS) throw noSpeech()
      }
      ctx.progress('transcribing', 0)
      const r = await d.engine.transcribe({
        wavPath: wav,
        durationSeconds: duration,
        language: languageHint(forced),
        signal: ctx.signal,
        workDir: ctx.workDir,
        onProgress: (p) => ctx.progress('transcribing', p),
      })
      check()
      segments = withoutNonSpeech(r.segments)
      if (segments.length === 0) throw noSpeech()
      detected = normalizeLanguage(r.language)
      heard = (r.languages ?? []).map(normalizeLanguage).filter((l): l is string => l !== null)
      engine = d.engine.engine
      provider = d.engine.provider
      model = r.model ?? d.engine.model
      if (d.diarizer && segments.every((x) => x.speaker === null)) {
        ctx.progress('diarizing', null)
        const started = Date.now()
        try {
          const diarized = await d.diarizer.diarize({ wavPath: wav, segments, speakers: note.speakers, signal: ctx.signal })
          segments = diarized.segments
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
      language,
      languagesDetected: heard.length > 0 ? heard : detected ? [detected] : language ? [language] : [],
      durationSeconds: Math.round(duration),
      engine,
      provider,
      model,
    })
    ctx.progress('indexing', null)
    await d.jobs.complete(lease, transcript, Math.round(duration), language)
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
        await d.media.extractSubtitles(mediaPath, t.index, out, { signal: ctx.signal })
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
      await Promise.allSettled([...running.values()])
    },
  }
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
