// Composition of the transcript features: exports, edits, translations (worker and engine),
// speakers (namer) and voice profiles (speaker-embedding model, vault). Kept apart from
// services.ts so the feature wires itself in one place.
import { existsSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Config } from './config.ts'
import type { ChatModel } from '../ports/chatModel.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { Translator } from '../ports/translator.ts'
import type { CommandHandler } from '../commands/handleCommand.ts'
import type { CreditCommands } from '../commands/credits.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { ReadQueries } from '../readmodels/queries.ts'
import { TranscriptCommands } from '../commands/transcripts.ts'
import { VoiceCommands } from '../commands/voice.ts'
import { selectTranslator } from './translation.ts'
import { rulesSpeakerNamer } from '../engines/speakers/rulesNamer.ts'
import { chatSpeakerNamer } from '../engines/speakers/chatNamer.ts'
import { loadGe2eEncoder, type Ge2eEncoder } from '../adapters/ge2e/speakerEncoder.ts'
import { ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'

export interface TranscriptServices {
  transcripts: TranscriptCommands
  voice: VoiceCommands
  /** The translation engine, chosen once on first use. */
  translator(): Promise<Translator>
  /** Wakes the translation worker (set by the worker when it starts). */
  translationQueue: { wake(): void; listener: (() => void) | null }
}

export interface SpeakerModel {
  embedder: Ge2eEncoder | null
  /** Why there is none. */
  reason: string | null
}

/** The speaker-embedding model (diarization and voice profiles share it), or why there is none. */
export function speakerEmbedderFrom(path: string, isDefault = false): SpeakerModel {
  if (!existsSync(path)) {
    return {
      embedder: null,
      reason: isDefault
        ? `no speaker-embedding model is installed (npm start fetches it into ${dirname(path)}; or set SPEAKER_EMBEDDING_MODEL to a model file)`
        : `the speaker-embedding model file ${path} does not exist`,
    }
  }
  try {
    return { embedder: loadGe2eEncoder(path, ffmpegPath()), reason: null }
  } catch (err) {
    return { embedder: null, reason: `the speaker-embedding model file ${path} could not be loaded: ${(err as Error).message}` }
  }
}

export function createTranscriptServices(
  config: Config,
  deps: { handler: CommandHandler; credits: CreditCommands; queries: ReadQueries; sync: ReadModelSync; blobs: BlobStore; chat: ChatModel | null; speakerModel: SpeakerModel; clock: () => Date },
): TranscriptServices {
  let translator: Promise<Translator> | null = null
  const selected = () => (translator ??= selectTranslator(config.transcripts.translationEngine, deps.chat))
  const translationQueue: TranscriptServices['translationQueue'] = {
    listener: null,
    wake() {
      this.listener?.()
    },
  }
  const { embedder, reason } = deps.speakerModel
  return {
    transcripts: new TranscriptCommands({
      handler: deps.handler,
      credits: deps.credits,
      reads: deps.queries.transcripts,
      sync: deps.sync,
      namer: deps.chat ? chatSpeakerNamer(deps.chat) : rulesSpeakerNamer,
      wakeTranslations: () => translationQueue.wake(),
      translationCapability: async () => (await selected()).capability,
      clock: deps.clock,
    }),
    voice: new VoiceCommands({
      handler: deps.handler,
      reads: deps.queries.voice,
      sync: deps.sync,
      blobs: deps.blobs,
      embedder,
      embedderUnavailable: reason,
      matchThreshold: config.transcripts.voiceMatchThreshold,
      clock: deps.clock,
    }),
    translator: selected,
    translationQueue,
  }
}
