// Inputs and results of the MCP tools and the /mcp/info document. Tool inputs are built from the
// REST schemas' own fields and results are the REST response schemas themselves, so a tool and
// its REST twin validate and answer alike.
import { z } from 'zod'
import { Uuid } from './common.ts'
import { CreateNoteRequest, ListNotesQuery, Note, NoteListFilters, NoteStatus, Progress } from './notes.ts'
import { RenameSpeakerRequest, ReplaceInTranscriptRequest, SpeakerLabelParams, TranslationLanguage } from './transcripts.ts'
import { GenerateAnalysisRequest } from './analysis.ts'
import { HighlightQuery } from './highlights.ts'
import { Answer, AskRequest, GlobalAnswer } from './ask.ts'
import { COST_CLASSES, TOOL_NAMES } from '../domain/mcp/tools.ts'

export const NoteRef = z.object({ noteId: Uuid.meta({ description: 'the note id (uuid)' }) })

export const SearchNotesInput = NoteListFilters.extend({
  q: ListNotesQuery.shape.q.unwrap().min(1).meta({ description: 'free text over title, description and transcript; every word must match' }),
})
export const ListRecentNotesInput = NoteListFilters.omit({ q: true })
/** Tools that take nothing (list_folders, founder_status). */
export const NoArguments = z.object({})
export const ListFoldersInput = NoArguments

export const ImportFromUrlInput = z.object({
  audioUrl: CreateNoteRequest.shape.audioUrl.unwrap().meta({ description: 'public link: a video page, a podcast feed or directory page, or a direct audio/video file' }),
  title: CreateNoteRequest.shape.title,
  language: CreateNoteRequest.shape.language,
  speakers: CreateNoteRequest.shape.speakers,
  idempotencyKey: z.string().min(1).max(200).optional().meta({ description: 'repeat the call with the same key to get the first note back instead of a second import' }),
})

/** A bounded wait: far below the usual 60 s client request timeout by default. */
export const WAIT_DEFAULT_SECONDS = 45
export const WAIT_MAX_SECONDS = 120
export const WaitForTranscriptionInput = NoteRef.extend({
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(WAIT_MAX_SECONDS)
    .default(WAIT_DEFAULT_SECONDS)
    .meta({ description: `how long to wait at most, 1 to ${WAIT_MAX_SECONDS} seconds (default ${WAIT_DEFAULT_SECONDS})` }),
})

export const TranscriptionWait = z
  .object({
    noteId: Uuid,
    status: NoteStatus,
    errorCode: z.string().nullable(),
    errorMessage: z.string().nullable().meta({ description: 'what went wrong and what fixes it, when failed' }),
    progress: Progress.nullable(),
    finished: z.boolean().meta({ description: 'true once the note is ready or failed; false when the wait ran out first' }),
    waitedMs: z.number().int(),
    note: Note,
    next: z.string(),
  })
  .meta({ id: 'TranscriptionWait' })
export type TranscriptionWait = z.infer<typeof TranscriptionWait>

// ---- transcripts and speakers -----------------------------------------------------------------

export const GetTranscriptSegmentsInput = NoteRef.extend({
  translation: TranslationLanguage.optional().meta({ description: 'es, en, de, fr, it or pt: include an already generated translation in every segment' }),
})
export const GetTranscriptTranslationInput = NoteRef.extend({
  language: TranslationLanguage.optional().meta({ description: 'es, en, de, fr, it or pt (default en)' }),
})
export const ReplaceInTranscriptInput = NoteRef.extend(ReplaceInTranscriptRequest.shape)
export const RenameSpeakerInput = NoteRef.extend({ label: SpeakerLabelParams.shape.label.meta({ description: 'the diarizer’s label: A, B, C...' }), ...RenameSpeakerRequest.shape })

// ---- analysis and questions -------------------------------------------------------------------

export const ListHighlightsInput = NoteRef.extend(HighlightQuery.shape)
/** The REST body with its rules (template and/or templates, at most 8 in all), plus the note. */
export const GenerateAiNotesInput = GenerateAnalysisRequest.extend(NoteRef.shape)
export const AskNoteInput = z.object({
  noteId: NoteRef.shape.noteId.optional().meta({ description: 'the note to ask about; leave it out to ask across the whole library (as POST /v1/ask)' }),
  question: AskRequest.shape.question.meta({ description: '1 to 4000 characters' }),
  sessionId: AskRequest.shape.sessionId,
})
/** POST /v1/notes/{id}/ask answers an Answer (with noteId), POST /v1/ask a GlobalAnswer (with citedNotes): each exactly as REST. */
export const AskNoteResult = z
  .object({
    ...GlobalAnswer.shape,
    answer: GlobalAnswer.shape.answer.meta({ description: 'quotes the audio as [mm:ss] (one note) or [Note title | mm:ss] (the library)' }),
    noteId: Answer.shape.noteId.optional().meta({ description: 'the note asked about (one note)' }),
    citedNotes: GlobalAnswer.shape.citedNotes.optional().meta({ description: 'the notes quoted (the library)' }),
  })
  .meta({ id: 'AskNoteResult' })

// ---- /mcp/info -------------------------------------------------------------------------------

export const McpToolInfo = z.object({
  name: z.enum(TOOL_NAMES),
  title: z.string(),
  description: z.string(),
  costClass: z.enum(Object.keys(COST_CLASSES) as [keyof typeof COST_CLASSES]),
  cost: z.string().meta({ description: 'the cost class in the spec’s words' }),
  credits: z.object({ amount: z.number().int(), per: z.string(), operation: z.string(), note: z.string().optional() }).nullable(),
  readOnly: z.boolean(),
  demo: z.boolean().meta({ description: 'also offered by the public demo endpoint' }),
})

export const McpInfo = z
  .object({
    name: z.string(),
    version: z.string(),
    protocol: z.object({ transport: z.literal('streamable-http'), stateless: z.boolean() }),
    endpoints: z.object({
      stream: z.url().meta({ description: 'POST {base_url}/mcp/stream' }),
      mcp: z.url().meta({ description: '{mcp_url}: the same server' }),
      demo: z.url(),
      info: z.url(),
    }),
    tools: z.array(McpToolInfo),
    auth: z.object({
      methods: z.array(
        z.discriminatedUnion('type', [
          z.object({ type: z.literal('api_key'), header: z.string(), plans: z.string() }),
          z.object({
            type: z.literal('oauth2'),
            authorizationServer: z.url(),
            authorizationServerMetadata: z.url(),
            protectedResourceMetadata: z.array(z.url()),
            grantTypes: z.array(z.string()),
            pkce: z.array(z.string()),
            scopes: z.array(z.string()),
            accessTokenSeconds: z.number().int(),
            refreshTokenSeconds: z.number().int(),
            grantSeconds: z.number().int(),
          }),
          z.object({ type: z.literal('none'), endpoint: z.url(), note: z.string() }),
        ]),
      ),
    }),
    demo: z.object({ url: z.url(), readOnly: z.literal(true), limit: z.object({ requests: z.number().int(), windowSeconds: z.number().int(), per: z.literal('ip') }) }),
  })
  .meta({ id: 'McpInfo' })
export type McpInfo = z.infer<typeof McpInfo>
