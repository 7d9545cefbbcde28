// Builds the transcription pipeline's parts from the configuration: the SSRF-safe fetcher, ffmpeg,
// the feed parser, yt-dlp, the configured speech engine and the job commands. The workers
// (app/workers.ts) run them.
import type { Config } from './config.ts'
import type { CommandHandler } from '../commands/handleCommand.ts'
import type { CreditCommands } from '../commands/credits.ts'
import { TranscriptionJobs } from '../commands/transcription.ts'
import { exponentialBackoff, type LeaseTerms } from '../domain/notes/transcriptionJob.ts'
import { targetResolver } from '../commands/publicTarget.ts'
import type { HostResolver } from '../ports/hostResolver.ts'
import type { MediaProbe } from '../ports/mediaProbe.ts'
import type { MediaTool } from '../ports/mediaTool.ts'
import type { HttpFetcher } from '../ports/httpFetcher.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'
import { safeHttpFetcher } from '../adapters/net/safeHttp.ts'
import { ffmpegMediaTool } from '../adapters/ffmpeg/mediaTool.ts'
import { fastXmlPodcastFeedParser } from '../adapters/xml/podcastFeed.ts'
import { ytDlpVideoSite } from '../adapters/ytdlp/videoSite.ts'
import { whisperCppEngine } from '../adapters/whisper/whisperCpp.ts'
import { fasterWhisperEngine } from '../adapters/ctranslate2/fasterWhisper.ts'
import { openAiTranscriptionEngine } from '../adapters/openai/transcriptionEngine.ts'
import { Sources } from '../workers/sources.ts'
import { TurnDiarizer } from '../engines/diarization/diarizer.ts'
import { LoudnessSpeechActivity, preferredActivity } from '../engines/diarization/activity.ts'
import type { Diarizer, SpeechActivity } from '../ports/diarizer.ts'
import { onnxDiarizer, type OnnxDiarizer } from '../adapters/onnxruntime/diarizer.ts'

export interface Ingest {
  jobs: TranscriptionJobs
  http: HttpFetcher
  media: MediaTool
  probe: MediaProbe
  sources: Sources
  engine: SpeechEngine
  /** The local diarizer, when diarization is on. */
  diarizer: Diarizer | null
  /** Its models (Silero VAD, segmentation-3.0, CAM++ on onnxruntime): fetched and loaded at start. */
  diarizerModels: OnnxDiarizer
  /**
   * Speech activity before recognition (audio with nothing to hear fails `no_speech`, long audio
   * is cut in its pauses): the trained VAD, or loudness while the VAD cannot run.
   */
  activity: SpeechActivity
  resolver: HostResolver
}

/** Backoff of the job policy with ±20 % jitter, so retries of many notes do not line up. */
export const jittered = (f: (attempt: number) => number) => (attempt: number) => Math.round(f(attempt) * (0.8 + Math.random() * 0.4))

export function createEngine(config: Config, media: MediaTool): SpeechEngine {
  const asr = config.pipeline.asr
  if (asr.engine === 'openai-compatible') {
    return openAiTranscriptionEngine({ baseUrl: asr.baseUrl, apiKey: asr.apiKey, model: asr.model, maxUploadBytes: asr.maxUploadBytes, timeoutMs: asr.timeoutMs, media })
  }
  if (asr.engine === 'faster-whisper') {
    return fasterWhisperEngine({
      model: asr.model,
      modelsDir: asr.modelsDir,
      python: asr.python,
      threads: asr.threads,
      computeType: asr.computeType,
      beamSize: asr.beamSize,
      languages: asr.languages,
      // As many processes as the workers run recognitions at once (their turns, workers/turns.ts).
      processes: config.pipeline.jobs.concurrency,
    })
  }
  return whisperCppEngine({ modelPath: asr.modelPath, threads: asr.threads })
}

export function createIngest(
  config: Config,
  deps: { handler: CommandHandler; credits: CreditCommands; probe: MediaProbe; resolver: HostResolver; clock: () => Date; log?: (line: string) => void },
): Ingest {
  const p = config.pipeline
  const terms: LeaseTerms = { leaseMs: p.jobs.leaseMs, maxAttempts: p.jobs.maxAttempts, backoffMs: jittered(exponentialBackoff(p.jobs.backoffBaseMs, p.jobs.backoffMaxMs)) }
  const resolveTarget = targetResolver(deps.resolver, config.importAllowlist)
  const http = safeHttpFetcher({
    resolveTarget,
    connectTimeoutMs: p.downloads.connectTimeoutMs,
    idleTimeoutMs: p.downloads.idleTimeoutMs,
    totalTimeoutMs: p.downloads.totalTimeoutMs,
  })
  // ffmpeg is resolved lazily: a process that never decodes does not need the binary.
  let tool: MediaTool | null = null
  const media: MediaTool = {
    toSpeechWav: (...a) => (tool ??= ffmpegMediaTool()).toSpeechWav(...a),
    extractSubtitles: (...a) => (tool ??= ffmpegMediaTool()).extractSubtitles(...a),
    encodeSlice: (...a) => (tool ??= ffmpegMediaTool()).encodeSlice(...a),
  }
  const sources = new Sources({
    http,
    feeds: fastXmlPodcastFeedParser,
    videoSite: ytDlpVideoSite({ ...(p.ytDlpPath ? { binary: p.ytDlpPath } : {}), resolveTarget, http, connectTimeoutMs: p.downloads.connectTimeoutMs }),
    directoryBaseUrl: p.podcastDirectoryUrl,
    maxFeedBytes: p.downloads.maxFeedBytes,
    maxTranscriptBytes: p.downloads.maxTranscriptBytes,
  })
  const d = config.transcripts.diarization
  const diarizerModels = onnxDiarizer({ modelsDir: d.modelsDir, python: d.python, threads: d.threads, tuning: { threshold: d.threshold } })
  return {
    jobs: new TranscriptionJobs(deps.handler, deps.credits, terms, deps.clock),
    http,
    media,
    probe: deps.probe,
    sources,
    engine: createEngine(config, media),
    diarizer: d.enabled ? new TurnDiarizer(diarizerModels) : null,
    diarizerModels,
    activity: preferredActivity(diarizerModels, new LoudnessSpeechActivity(), deps.log ?? ((line) => console.log(line))),
    resolver: deps.resolver,
  }
}
