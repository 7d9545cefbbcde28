// Transcripts, their exports and translations, speakers and voice profiles (spec parts 2 and 4).
// The REST routes validate with these schemas and the MCP tools declare them.
import { z } from 'zod'
import { DateTime, Uuid, nonBlank } from './common.ts'
import { TRANSLATION_LANGUAGES } from '../domain/languages.ts'
import { TRANSCRIPT_FORMATS } from '../domain/transcripts/formats.ts'

export const TranslationLanguage = z.enum(TRANSLATION_LANGUAGES)
export const TranscriptFormat = z.enum(TRANSCRIPT_FORMATS)

// ---- speakers ---------------------------------------------------------------------------------

export const Evidence = z
  .object({
    source: z.enum(['transcript', 'metadata', 'roster', 'voice', 'published']).meta({ description: '`published` (extension): the name the source published with the transcript (a WebVTT voice tag, an SRT `Name:` prefix)' }),
    segment: z.number().int().nullable().meta({ description: 'segment `sequence` when source is `transcript`' }),
    quote: z.string().meta({ description: 'for `voice`, the profile name' }),
    similarity: z.number().min(0).max(1).optional().meta({ description: 'for `voice`: cosine similarity with the profile' }),
  })
  .meta({ id: 'SpeakerEvidence' })

export const Speaker = z
  .object({
    label: z.string().nullable(),
    name: z.string().nullable().meta({ description: 'the name in use: user-given, persistent profile, or inferred with high confidence' }),
    nameStatus: z.enum(['confirmed', 'suggested']).nullable(),
    suggestedName: z.string().nullable(),
    suggestedNameConfidence: z.number().min(0).max(1).nullable(),
    speechSeconds: z.number().nullable(),
    segmentCount: z.number().int().nullable(),
    voiceExcluded: z.boolean(),
    diarizationConfidence: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .meta({ description: "extension: how clearly the local diarizer told this speaker's voice from the others' (0 to 1: how much closer its speech is to its own voice than to the next one's); absent when the speakers came from the engine or a published transcript" }),
  })
  .meta({ id: 'Speaker' })
export type Speaker = z.infer<typeof Speaker>

export const SpeakerWithEvidence = Speaker.extend({ evidence: z.array(Evidence) }).meta({ id: 'SpeakerWithEvidence' })
export const SpeakerList = z.object({ noteId: Uuid, speakers: z.array(SpeakerWithEvidence) }).meta({ id: 'SpeakerList' })
export type SpeakerList = z.infer<typeof SpeakerList>

export const SpeakerLabelParams = z.object({ id: Uuid, label: z.string().min(1).max(20) })
export const RenameSpeakerRequest = z
  .object({
    name: nonBlank(120).meta({ description: '1 to 120 characters' }),
    voiceExcluded: z.boolean().optional().meta({ description: "extension: 'do not recognise this person' for this speaker" }),
  })
  .meta({ id: 'RenameSpeakerRequest' })

export const Turn = z.object({
  speakerLabel: z.string().nullable(),
  speakerName: z.string().nullable(),
  startMs: z.number().int(),
  endMs: z.number().int(),
  firstSegment: z.number().int(),
  lastSegment: z.number().int(),
  segmentCount: z.number().int(),
})
export const SpeakerTimeline = z
  .object({ noteId: Uuid, durationMs: z.number().int().nullable(), speakers: z.array(Speaker), turns: z.array(Turn) })
  .meta({ id: 'SpeakerTimeline', description: 'Extension: who speaks when, as turns of consecutive segments of one speaker.' })
export type SpeakerTimeline = z.infer<typeof SpeakerTimeline>

// ---- transcript -------------------------------------------------------------------------------

export const Word = z.object({ text: z.string(), startMs: z.number().int(), endMs: z.number().int() })

export const Segment = z
  .object({
    id: Uuid.meta({ description: 'extension: the segment id citations point at' }),
    sequence: z.number().int(),
    startMs: z.number().int(),
    endMs: z.number().int(),
    speakerLabel: z.string().nullable(),
    speakerName: z.string().nullable(),
    text: z.string(),
    confidence: z.number().nullable(),
    locale: z.string().nullable(),
    words: z.array(Word).nullable(),
    translation: z.string().optional().meta({ description: 'the translated text, present when `translation` is requested and this segment has been translated; absent while it has not (yet), as in the text formats' }),
  })
  .meta({ id: 'Segment' })
export type Segment = z.infer<typeof Segment>

export const TranslationSummary = z
  .object({ language: TranslationLanguage, status: z.enum(['none', 'pending', 'running', 'ready', 'failed']), stale: z.boolean() })
  .meta({ id: 'TranslationSummary', description: 'Extension: the state of the translation included with `translation`.' })

export const Truncation = z
  .object({
    shownSegments: z.number().int(),
    totalSegments: z.number().int(),
    shownCharacters: z.number().int().meta({ description: 'characters of segment text shown (of the translated text, for a translation)' }),
    totalCharacters: z.number().int(),
    rule: z.string().optional().meta({ description: 'the rule that cut it (the free-plan preview)' }),
    getTheRest: z.string().optional().meta({ description: 'how to get the whole content' }),
  })
  .meta({ id: 'Truncation', description: 'Extension: how much of the content is shown when it was cut (free plan).' })
export type Truncation = z.infer<typeof Truncation>

export const Transcript = z
  .object({
    noteId: Uuid,
    language: z.string().nullable(),
    languagesDetected: z.array(z.string()),
    durationSeconds: z.number().int().nullable(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    fullText: z.string(),
    speakers: z.array(Speaker),
    segments: z.array(Segment),
    translation: TranslationSummary.optional(),
    truncated: z.boolean().optional().meta({ description: 'extension: true when the content was cut (free plan)' }),
    truncation: Truncation.optional(),
  })
  .meta({ id: 'Transcript' })
export type Transcript = z.infer<typeof Transcript>

export const TranscriptQuery = z.object({
  format: z.enum(TRANSCRIPT_FORMATS).default('json').meta({ description: '`json` (default), `txt`, `srt`, `vtt`, `md`' }),
  translation: TranslationLanguage.optional().meta({ description: '`es`, `en`, `de`, `fr`, `it`, `pt`: include an already generated translation' }),
  translationMode: z.enum(['translation', 'both']).optional().meta({ description: '`translation` or `both` (default); text formats' }),
})

// ---- edits ----------------------------------------------------------------------------------

export const ReplaceInTranscriptRequest = z
  .object({
    find: z.string().min(1).max(200).meta({ description: 'literal text to find in segment texts' }),
    replace: z.string().max(500).meta({ description: 'its replacement (may be empty)' }),
    caseSensitive: z.boolean().default(false),
    wholeWord: z.boolean().default(true).meta({ description: 'only matches not surrounded by letters or digits' }),
  })
  .meta({ id: 'ReplaceInTranscriptRequest' })
export type ReplaceInTranscriptRequest = z.infer<typeof ReplaceInTranscriptRequest>

/** A person gives one line to another speaker (the diarizer heard the wrong voice). */
export const SegmentParams = z.object({ id: Uuid, sequence: z.coerce.number().int().min(0).max(1_000_000) })
// One shape or the other, each closed, so the contract itself says "not both" (a refinement would not show in it).
export const SegmentSpeakerRequest = z
  .union([
    z.object({ speakerLabel: SpeakerLabelParams.shape.label.meta({ description: "one of the transcript's speaker labels" }) }).strict(),
    z.object({ newSpeaker: z.literal(true).meta({ description: 'a new speaker (the next free letter): a voice the diarizer missed' }) }).strict(),
  ])
  .meta({ id: 'SegmentSpeakerRequest' })
export type SegmentSpeakerRequest = z.infer<typeof SegmentSpeakerRequest>

/** Every line of one speaker to another (two labels the diarizer made of one person). */
export const MergeSpeakerRequest = z
  .object({ into: SpeakerLabelParams.shape.label.meta({ description: 'the speaker that takes every line of the one in the path' }) })
  .strict()
  .meta({ id: 'MergeSpeakerRequest' })

export const ReplaceInTranscriptResponse = z
  .object({
    noteId: Uuid,
    occurrences: z.number().int(),
    changedSegments: z.array(z.object({ sequence: z.number().int(), before: z.string(), after: z.string() })),
    staleTranslations: z.array(z.object({ language: TranslationLanguage, segments: z.array(z.number().int()) })),
    truncated: z.boolean().optional().meta({ description: 'extension: true when changed segments outside the free plan’s preview are left out of changedSegments (they were changed all the same)' }),
  })
  .meta({ id: 'ReplaceInTranscriptResponse' })
export type ReplaceInTranscriptResponse = z.infer<typeof ReplaceInTranscriptResponse>

// ---- translation ------------------------------------------------------------------------------

export const TranslationQuery = z.object({ language: TranslationLanguage.optional().meta({ description: '`es`, `en`, `de`, `fr`, `it`, `pt`; default: the first of these in Accept-Language, else `en`' }) })
export const TranslationRequest = z
  .object({ language: TranslationLanguage.optional().meta({ description: 'default: the first of these in Accept-Language, else `en`' }) })
  .meta({ id: 'TranslationRequest', description: 'Optional: no body (or an empty one) takes the default language.' })

export const TranslationState = z
  .object({
    noteId: Uuid,
    language: TranslationLanguage,
    sourceLanguage: z.string().nullable(),
    status: z.enum(['none', 'pending', 'running', 'ready', 'failed']),
    stale: z.boolean().meta({ description: 'the transcript changed after translating and `staleSegments` are missing again' }),
    staleSegments: z.array(z.number().int()),
    progress: z.object({ translatedSegments: z.number().int(), totalSegments: z.number().int(), percent: z.number().min(0).max(100) }),
    engine: z.string().nullable(),
    model: z.string().nullable(),
    errorCode: z.string().nullable().meta({ description: 'why it failed (`translation_engine_unavailable`, `translation_pair_unsupported`, `translation_engine_failed`)' }),
    message: z.string().nullable(),
    requestedAt: DateTime.nullable(),
    completedAt: DateTime.nullable(),
    updatedAt: DateTime.nullable(),
    segments: z.array(
      z.object({ sequence: z.number().int(), startMs: z.number().int(), endMs: z.number().int(), speakerLabel: z.string().nullable(), speakerName: z.string().nullable(), text: z.string().nullable() }),
    ),
    truncated: z.boolean().optional().meta({ description: 'extension: true when the content was cut (free plan)' }),
    truncation: Truncation.optional(),
  })
  .meta({ id: 'TranslationState' })
export type TranslationState = z.infer<typeof TranslationState>

/** What the installed engine translates (domain/transcripts/translationPairs.ts). */
export const TranslationPairs = z
  .object({
    engine: z.string().meta({ description: '`openai-compatible`, `apertium` or `none`' }),
    model: z.string().nullable(),
    pairs: z
      .array(
        z.object({
          from: z.string().meta({ description: 'the audio’s language (`es`, `en`, ...), or `*`: any, including an unknown one' }),
          to: TranslationLanguage,
        }),
      )
      .meta({ description: 'every pair a translation can be requested for; another is refused with 409 `translation_pair_unsupported`' }),
    missingPairsHint: z.string().nullable().meta({ description: 'what the operator can configure for the missing pairs; null when none is missing' }),
  })
  .meta({ id: 'TranslationPairs' })

// ---- voice profiles ---------------------------------------------------------------------------

export const VoiceProfile = z
  .object({
    id: Uuid,
    name: z.string(),
    confirmedAppearances: z.number().int(),
    voiceSeconds: z.number(),
    hasVoiceprint: z.boolean(),
    voiceExcluded: z.boolean(),
  })
  .meta({ id: 'VoiceProfile' })

export const VoiceProfiles = z
  .object({
    consent: z.object({
      status: z.enum(['granted', 'revoked', 'never', 'outdated']),
      grantedAt: DateTime.nullable(),
      revokedAt: DateTime.nullable(),
    }),
    profiles: z.array(VoiceProfile),
    voiceMatching: z
      .object({ available: z.boolean(), reason: z.string().nullable() })
      .meta({ description: 'extension: whether voices can be matched here (consent and a speaker-embedding model)' }),
  })
  .meta({ id: 'VoiceProfiles' })
export type VoiceProfiles = z.infer<typeof VoiceProfiles>

export const VoiceProfileParams = z.object({ profileId: Uuid })
export const VoiceProfilePatch = z.object({ voiceExcluded: z.boolean() }).meta({ id: 'VoiceProfilePatch' })
export const GrantConsentRequest = z.object({ consentVersion: z.string().min(1).max(40).optional() }).meta({ id: 'GrantConsentRequest' })
