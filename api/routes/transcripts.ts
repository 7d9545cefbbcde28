// Transcripts, translations, speakers and voice profiles over REST (spec part 4): thin adapters
// from HTTP to the commands and queries that the MCP tools call too.
import { transcriptPreviewFor } from '../../domain/transcripts/preview.ts'
import type { Application } from '../../commands/application.ts'
import { PRICES } from '../../domain/credits/prices.ts'
import { OPERATION_LIMITS } from '../../domain/limits.ts'
import { preferredLanguage, type TranslationLanguage } from '../../domain/languages.ts'
import { CONTENT_TYPES } from '../../domain/transcripts/formats.ts'
import { NoteIdParams } from '../../contract/notes.ts'
import {
  GrantConsentRequest,
  MergeSpeakerRequest,
  RenameSpeakerRequest,
  ReplaceInTranscriptRequest,
  ReplaceInTranscriptResponse,
  SegmentParams,
  SegmentSpeakerRequest,
  SpeakerLabelParams,
  SpeakerList,
  SpeakerTimeline,
  Transcript,
  TranscriptQuery,
  TranslationQuery,
  TranslationRequest,
  TranslationPairs,
  TranslationState,
  VoiceProfileParams,
  VoiceProfilePatch,
  VoiceProfiles,
} from '../../contract/transcripts.ts'
import { defineRoute, type RouteDef } from '../route.ts'

const language = (value: TranslationLanguage | undefined, acceptLanguage: string | undefined): TranslationLanguage => value ?? preferredLanguage(acceptLanguage)

export const transcriptRoutes = (app: Application): RouteDef[] => {
  const f = { transcripts: app.transcripts, voice: app.voice }
  return [
    defineRoute({
      operationId: 'getTranscript',
      method: 'GET',
      path: '/v1/notes/:id/transcript',
      tag: 'transcripts',
      summary: 'The transcript as JSON, plain text, SubRip, WebVTT or Markdown',
      description:
        'Speaker names in use stand wherever a label would (else "Speaker A"). With `translation`, a translation that was requested is included (one never requested is 404 `no_transcript`, never the original text in its place): ' +
        'in json every segment translated so far gets `translation` (a segment without one has no such field); text formats show it under each segment (`both`, default) or instead of the text (`translation`). ' +
        'The `X-Translation-Status` header tells whether the translation is ready, stale, pending, running or failed. 1 credit per read (a read that fails is refunded).',
      params: NoteIdParams,
      notFound: true,
      query: TranscriptQuery,
      invalidCode: 'invalid_format',
      invalidCodes: { translation: 'invalid_language' },
      response: {
        status: 200,
        schema: Transcript,
        description: 'The transcript in the requested format.',
        contentTypes: {
          'application/json': 'format=json',
          'text/plain': 'format=txt: one line per segment, "Name: text"',
          'text/markdown': 'format=md: a heading per speaker turn, "[mm:ss] text" per segment',
          'application/x-subrip': 'format=srt: numbered cues, HH:MM:SS,mmm',
          'text/vtt': 'format=vtt: WEBVTT, HH:MM:SS.mmm, <v Name> voice tags',
        },
      },
      errors: ['invalid_format', 'invalid_language', 'insufficient_credits', 'not_found', 'no_transcript'],
      errorConditions: { no_transcript: 'note not found or no transcript yet, or no translation into the `translation` language was ever requested (nothing is charged)' },
      price: PRICES.transcriptRead,
      async handle({ caller, params, query, reply }) {
        const { format, translation } = query
        const out = await f.transcripts.readTranscript(caller, params.id, { format, translation, translationMode: query.translationMode })
        reply.header('content-type', format === 'json' ? `${CONTENT_TYPES.json}; charset=utf-8` : out.contentType)
        if (translation) reply.header('x-translation-status', out.translationStatus)
        return out.body
      },
    }),
    defineRoute({
      operationId: 'replaceInTranscript',
      method: 'POST',
      path: '/v1/notes/:id/transcript/replace',
      tag: 'transcripts',
      summary: 'Find and replace text in the transcript',
      description:
        '`find` is literal text. Case-insensitive unless `caseSensitive`; whole words only unless `wholeWord: false`. The full text, exports and search ' +
        'follow the change; ready translations lose the changed segments\' translations and report them as `stale`.',
      extension: true,
      params: NoteIdParams,
      notFound: true,
      body: ReplaceInTranscriptRequest,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: ReplaceInTranscriptResponse, description: 'What changed (occurrences 0: nothing matched).' },
      errors: ['invalid_request', 'not_found', 'no_transcript'],
      handle: ({ caller, params, body }) => f.transcripts.replace(caller, params.id, body),
    }),
    defineRoute({
      operationId: 'getTranscriptTranslation',
      method: 'GET',
      path: '/v1/notes/:id/transcript/translation',
      tag: 'transcripts',
      summary: 'The state of a translation, segment-aligned by sequence',
      description: 'Free. `language` defaults to the first of es, en, de, fr, it, pt in the Accept-Language header, else en.',
      params: NoteIdParams,
      notFound: true,
      query: TranslationQuery,
      invalidCode: 'invalid_language',
      response: { status: 200, schema: TranslationState, description: 'The translation state (status `none` when never requested).' },
      errors: ['invalid_language', 'not_found', 'no_transcript'],
      handle: ({ caller, params, query, req }) => app.queries.transcripts.translation(caller.accountId, params.id, language(query.language, req.headers['accept-language']), transcriptPreviewFor(caller.plan)),
    }),
    defineRoute({
      operationId: 'requestTranscriptTranslation',
      method: 'POST',
      path: '/v1/notes/:id/transcript/translation',
      tag: 'transcripts',
      summary: 'Queue a translation of the transcript',
      description:
        '202 with progress while queued or running; 200 when already done (free to repeat). A stale translation is queued again for its missing segments. ' +
        '`language` defaults to the first of es, en, de, fr, it, pt in Accept-Language, else en.',
      params: NoteIdParams,
      notFound: true,
      body: TranslationRequest,
      invalidCode: 'invalid_language',
      response: {
        status: 202,
        schema: TranslationState,
        description: 'Queued (pending) or running; poll the GET.',
        also: [{ status: 200, description: 'Already translated: the ready translation.' }],
      },
      errors: ['invalid_language', 'insufficient_credits', 'not_found', 'no_transcript', 'same_language', 'translation_pair_unsupported'],
      errorConditions: {
        translation_pair_unsupported: 'extension: the installed engine cannot translate the audio’s language into this one (GET /v1/translation/pairs lists what it can); the body carries `engine` and `supportedPairs`',
      },
      price: PRICES.translation,
      async handle({ caller, params, body, req, reply }) {
        const lang = language(body.language, req.headers['accept-language'])
        const { queued, state } = await f.transcripts.requestTranslation(caller, params.id, lang)
        if (!queued) return reply.code(200).send(state)
        return state
      },
    }),
    defineRoute({
      operationId: 'listTranslationPairs',
      method: 'GET',
      path: '/v1/translation/pairs',
      tag: 'transcripts',
      summary: 'What translations can be requested here: the installed engine and its language pairs',
      description:
        'Free. A translation into a language the engine cannot reach from the audio’s language is refused when requested (409 `translation_pair_unsupported`, with the same pairs), never queued to fail. ' +
        'An OpenAI-compatible model translates from any language (`from: "*"`); Apertium, the local engine, only the pairs of its installed packages (none into German).',
      extension: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: TranslationPairs, description: 'The engine and its pairs.' },
      errors: [],
      handle: () => f.transcripts.translationPairs(),
    }),
    defineRoute({
      operationId: 'listSpeakers',
      method: 'GET',
      path: '/v1/notes/:id/speakers',
      tag: 'speakers',
      summary: 'The speakers of a note, with the evidence for their names',
      params: NoteIdParams,
      notFound: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: SpeakerList, description: 'The speakers.' },
      errors: ['not_found'],
      handle: ({ caller, params }) => app.queries.transcripts.speakers(caller.accountId, params.id, transcriptPreviewFor(caller.plan)),
    }),
    defineRoute({
      operationId: 'getSpeakerTimeline',
      method: 'GET',
      path: '/v1/notes/:id/speakers/timeline',
      tag: 'speakers',
      summary: 'Who speaks when: turns of consecutive segments per speaker',
      extension: true,
      params: NoteIdParams,
      notFound: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: SpeakerTimeline, description: 'The timeline.' },
      errors: ['not_found', 'no_transcript'],
      handle: ({ caller, params }) => app.queries.transcripts.timeline(caller.accountId, params.id),
    }),
    defineRoute({
      operationId: 'changeSegmentSpeaker',
      method: 'PATCH',
      path: '/v1/notes/:id/segments/:sequence/speaker',
      tag: 'speakers',
      summary: 'Give one line to another speaker: the diarizer heard the wrong voice',
      description:
        "`speakerLabel`: one of the transcript's speakers; `newSpeaker: true`: a speaker the diarizer missed, labelled with the first letter no line has and no speaker had. " +
        'The line keeps its id, text, words and times; talk time, the timeline, exports and what is generated afterwards follow. Free. ' +
        "On a plan with a preview, a line past it is not found. Answers the speakers after the change (read the lines with GET transcript).",
      extension: true,
      params: SegmentParams,
      notFound: true,
      body: SegmentSpeakerRequest,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: SpeakerList, description: 'The speakers after the change.' },
      errors: ['invalid_request', 'not_found', 'no_transcript'],
      handle: ({ caller, params, body }) => f.transcripts.changeSegmentSpeaker(caller, params.id, params.sequence, 'speakerLabel' in body ? body.speakerLabel : null),
    }),
    defineRoute({
      operationId: 'mergeSpeaker',
      method: 'POST',
      path: '/v1/notes/:id/speakers/:label/merge',
      tag: 'speakers',
      summary: 'Give every line of a speaker to another: one person the diarizer heard as two',
      description: "`into`: the transcript's speaker that takes every line of the one in the path (one event; talk time, timeline and exports follow). Free.",
      extension: true,
      params: SpeakerLabelParams,
      notFound: true,
      body: MergeSpeakerRequest,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: SpeakerList, description: 'The speakers after the merge.' },
      errors: ['invalid_request', 'not_found', 'no_transcript'],
      handle: ({ caller, params, body }) => f.transcripts.mergeSpeaker(caller, params.id, params.label, body.into),
    }),
    defineRoute({
      operationId: 'undoLineSpeakers',
      method: 'POST',
      path: '/v1/notes/:id/speakers/undo',
      tag: 'speakers',
      summary: 'Undo the last change of who said which line (a move or a merge)',
      description:
        'Gives the lines of the last move or merge back to the speakers they had, except lines moved again since. Undoing an undo redoes it. ' +
        '409 `conflict` when there is nothing to undo (none yet, or since the last transcription). Free.',
      extension: true,
      params: NoteIdParams,
      notFound: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: SpeakerList, description: 'The speakers after the undo.' },
      errors: ['not_found', 'no_transcript', 'conflict'],
      handle: ({ caller, params }) => f.transcripts.undoLineSpeakers(caller, params.id),
    }),
    defineRoute({
      operationId: 'suggestSpeakerNames',
      method: 'POST',
      path: '/v1/notes/:id/speakers/suggest',
      tag: 'speakers',
      summary: 'Infer speaker names from the content and the source',
      description:
        'From self-introductions, who addresses whom, the title, channel or show metadata and the names confirmed on earlier notes of the same source. ' +
        'No voice analysis. `name` takes an inferred name from confidence 0.8 on; a name the user gave is never overwritten. Free; 10 per hour per API key, counted together with the MCP tool suggest_speaker_names.',
      params: NoteIdParams,
      notFound: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: SpeakerList, description: 'The speakers after inference.' },
      errors: ['not_found', 'note_not_ready', 'speaker_naming_failed'],
      rateLimit: OPERATION_LIMITS.speakersSuggest,
      handle: ({ caller, params }) => f.transcripts.suggestSpeakerNames(caller, params.id),
    }),
    defineRoute({
      operationId: 'renameSpeaker',
      method: 'PATCH',
      path: '/v1/notes/:id/speakers/:label',
      tag: 'speakers',
      summary: 'Name a speaker (confirmed), used in transcript, timeline and exports',
      description:
        'Remembered for later notes of the same channel or podcast. Extension: `voiceExcluded: true` marks the speaker \'do not recognise this person\'.',
      params: SpeakerLabelParams,
      notFound: true,
      body: RenameSpeakerRequest,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: SpeakerList, description: 'The speakers after the change.' },
      errors: ['invalid_request', 'not_found', 'no_transcript'],
      async handle({ caller, params, body }) {
        return f.transcripts.renameSpeaker(caller, params.id, params.label, body.name, body.voiceExcluded)
      },
    }),
    defineRoute({
      operationId: 'getVoiceProfiles',
      method: 'GET',
      path: '/v1/voice-profiles',
      tag: 'voice',
      summary: 'Biometric consent and voice profiles',
      description: 'Voice vectors are never returned. `voiceMatching` (extension) says whether voices can be matched here and why not.',
      invalidCode: 'invalid_request',
      response: { status: 200, schema: VoiceProfiles, description: 'Consent and profiles.' },
      errors: [],
      handle: ({ caller }) => f.voice.profiles(caller),
    }),
    defineRoute({
      operationId: 'grantVoiceConsent',
      method: 'POST',
      path: '/v1/voice-profiles/consent',
      tag: 'voice',
      summary: 'Grant biometric consent: refused for API keys',
      description: 'Biometric consent is given by the account owner in the app or on the web; through the API this always answers 403 `consent_requires_app`.',
      extension: true,
      body: GrantConsentRequest,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: VoiceProfiles, description: 'Never through an API key.' },
      errors: ['consent_requires_app'],
      handle: ({ caller, body }) => f.voice.grantConsent(caller, body.consentVersion),
    }),
    defineRoute({
      operationId: 'revokeVoiceConsent',
      method: 'DELETE',
      path: '/v1/voice-profiles/consent',
      tag: 'voice',
      summary: 'Revoke biometric consent and delete every voiceprint',
      extension: true,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: VoiceProfiles, description: 'Consent revoked; profiles keep their names, without voiceprints.' },
      errors: [],
      handle: ({ caller }) => f.voice.revokeConsent(caller),
    }),
    defineRoute({
      operationId: 'updateVoiceProfile',
      method: 'PATCH',
      path: '/v1/voice-profiles/:profileId',
      tag: 'voice',
      summary: "Mark a profile 'do not recognise this person' (or lift it)",
      description: 'An excluded profile keeps only its name: its voiceprint is deleted and it is never analysed or matched.',
      extension: true,
      params: VoiceProfileParams,
      notFound: true,
      body: VoiceProfilePatch,
      invalidCode: 'invalid_request',
      response: { status: 200, schema: VoiceProfiles, description: 'Consent and profiles after the change.' },
      errors: ['invalid_request', 'not_found'],
      handle: ({ caller, params, body }) => f.voice.setProfileExclusion(caller, params.profileId, body.voiceExcluded),
    }),
  ]
}

