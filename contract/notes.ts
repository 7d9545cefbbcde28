// The notes resource (spec parts 2 and 4): what a note looks like, how one is created,
// finalized, listed, read and edited. Field limits are spec part 8.
import { z } from 'zod'
import { DateTime, Uuid, csvFromQuery, httpUrl, intFromQuery, nonBlank, wholeNumber } from './common.ts'
import { Analysis, Chapter } from './analysis.ts'
import { Truncation } from './transcripts.ts'
import { NOTE_STATUSES, ORIGINS, PROVIDERS } from '../domain/notes/note.ts'
import { AUDIO_OR_VIDEO_TYPE } from '../domain/notes/mediaType.ts'

export const NoteStatus = z.enum(NOTE_STATUSES)
export const Origin = z.enum(ORIGINS)
export const PROGRESS_STAGES = ['awaiting_upload', 'queued', 'downloading', 'decoding', 'transcribing', 'diarizing', 'indexing'] as const

export const Progress = z
  .object({
    stage: z.enum(PROGRESS_STAGES),
    percent: z.number().min(0).max(100).nullable().meta({ description: 'of the current stage, when known' }),
    attempt: z.number().int().min(0).meta({ description: 'processing attempts so far (retries after a failure count)' }),
  })
  .meta({ id: 'Progress', description: 'Extension: where a `processing` note is; null once ready or failed.' })

export const Note = z
  .object({
    id: Uuid,
    title: z.string(),
    description: z.string().nullable(),
    status: NoteStatus,
    errorCode: z.string().nullable(),
    errorMessage: z
      .string()
      .nullable()
      .meta({ description: 'Extension: what went wrong and what fixes it, in words (the `errorCode` is the stable value to branch on); null unless `failed`' }),
    sourceType: z.enum(['upload', 'recording', 'url']),
    origin: Origin,
    sourceUrl: z.string().nullable(),
    folderId: Uuid.nullable(),
    tags: z.array(z.string()),
    durationSeconds: z.number().int().nullable(),
    language: z.string().nullable(),
    recordedAt: DateTime.nullable(),
    createdAt: DateTime,
    updatedAt: DateTime,
    progress: Progress.nullable(),
    keepAudio: z.boolean().meta({ description: 'Extension: the audio is kept beyond the retention window' }),
    audioDeletedAt: DateTime.nullable().meta({ description: 'Extension: when the retention window deleted the audio (the transcript stays); null while it is kept' }),
  })
  .meta({ id: 'Note' })
export type Note = z.infer<typeof Note>

export const NoteList = z
  .object({ notes: z.array(Note), nextCursor: Uuid.nullable(), hasMore: z.boolean() })
  .meta({ id: 'NoteList' })
export type NoteList = z.infer<typeof NoteList>

export const NoteDetail = Note.extend({
  transcript: z
    .object({
      fullText: z.string(),
      languagesDetected: z.array(z.string()),
      speakerCount: z.number().int().nullable(),
      truncated: z.boolean().optional().meta({ description: 'extension: true when fullText is the free plan’s preview (as get_transcript_segments cuts it)' }),
      truncation: Truncation.optional(),
    })
    .nullable(),
  aiNotes: z.array(Analysis),
  outline: z.array(Chapter),
}).meta({ id: 'NoteDetail' })
export type NoteDetail = z.infer<typeof NoteDetail>

export const NoteIdParams = z.object({ id: Uuid })

const Title = nonBlank(200)
// language-region form, e.g. `es-ES`, or a bare language (`en`).
const Locale = z
  .string()
  .max(20)
  .regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'a language tag such as en or es-ES')

export const CreateNoteRequest = z
  .object({
    audioUrl: httpUrl().optional().meta({ description: 'public link to import (http or https)' }),
    filename: z.string().min(1).max(255).optional().meta({ description: 'direct upload: original file name' }),
    contentType: z
      .string()
      .max(100)
      .regex(AUDIO_OR_VIDEO_TYPE, 'contentType must be audio/* or video/* (parameters such as ;codecs=opus are fine)')
      .optional()
      .meta({ description: 'direct upload: audio/* or video/*, with parameters if any (`audio/webm;codecs=opus`)' }),
    fileSizeBytes: wholeNumber(1).optional(),
    title: Title.optional(),
    language: Locale.optional().meta({ description: 'forces a locale; default is auto-detect' }),
    speakers: wholeNumber(1, 20)
      .optional()
      .meta({ description: 'Extension: how many people speak, when known; the local diarizer then finds exactly that many (default: it finds the number itself)' }),
    keepAudio: z.boolean().optional().meta({ description: 'direct upload: keep the audio beyond the retention window' }),
  })
  .superRefine((b, ctx) => {
    const upload = b.filename !== undefined || b.contentType !== undefined || b.fileSizeBytes !== undefined
    if (b.audioUrl !== undefined && upload) ctx.addIssue({ code: 'custom', message: 'send either audioUrl (import) or filename + contentType (upload), not both' })
    else if (b.audioUrl === undefined && !upload) ctx.addIssue({ code: 'custom', message: 'send audioUrl (import) or filename + contentType (upload)' })
    else if (upload && (b.filename === undefined || b.contentType === undefined)) ctx.addIssue({ code: 'custom', message: 'an upload needs both filename and contentType' })
    if (b.audioUrl !== undefined && b.keepAudio !== undefined) ctx.addIssue({ code: 'custom', message: 'keepAudio applies to uploads only' })
  })
  .meta({
    id: 'CreateNoteRequest',
    description: 'One of two shapes: an import (`audioUrl`) or a direct upload (`filename` + `contentType`, optionally `fileSizeBytes` and `keepAudio`).',
    // The rule the refinement above checks, stated for generated clients.
    oneOf: [
      { title: 'import', required: ['audioUrl'], not: { anyOf: ['filename', 'contentType', 'fileSizeBytes', 'keepAudio'].map((f) => ({ required: [f] })) } },
      { title: 'upload', required: ['filename', 'contentType'], not: { required: ['audioUrl'] } },
    ],
  })
export type CreateNoteRequest = z.infer<typeof CreateNoteRequest>

export const UploadInstructions = z.object({
  method: z.literal('PUT'),
  url: z.url(),
  expiresInSeconds: z.number().int(),
  headers: z.record(z.string(), z.string()),
})

export const CreateNoteResponse = z
  .object({
    noteId: Uuid,
    status: z.literal('processing'),
    provider: z.enum(PROVIDERS).optional(),
    upload: UploadInstructions.optional(),
    next: z.string(),
  })
  .meta({ id: 'CreateNoteResponse' })
export type CreateNoteResponse = z.infer<typeof CreateNoteResponse>

export const FinalizeRequest = z.object({ title: Title.optional() }).meta({ id: 'FinalizeRequest', description: 'Optional: no body (or an empty one) keeps the title.' })
export const FinalizeResponse = z.object({ noteId: Uuid, jobId: z.string(), status: z.literal('processing') }).meta({ id: 'FinalizeResponse' })

export const ListNotesQuery = z.object({
  limit: intFromQuery(1, 100, 20).meta({ description: 'page size, 1 to 100' }),
  cursor: Uuid.optional().meta({ description: 'the nextCursor of the previous page' }),
  q: z.string().max(200).optional().meta({ description: 'free text over title, description and transcript' }),
  folderId: z.union([Uuid, z.literal('null')]).optional().meta({ description: 'a folder uuid, or the literal null for notes with no folder' }),
  status: NoteStatus.optional(),
  since: DateTime.optional().meta({ description: 'only notes created at or after this instant' }),
  tags: csvFromQuery(z.string().max(50), 20).optional().meta({ description: 'comma separated; notes carrying ALL of them' }),
  origin: csvFromQuery(Origin, ORIGINS.length).optional().meta({ description: 'comma separated subset of the origins' }),
})
export type ListNotesQuery = z.infer<typeof ListNotesQuery>

const Tag = nonBlank(50)
export const PatchNoteRequest = z
  .object({
    title: Title.optional(),
    description: z.string().max(5000).nullable().optional(),
    folderId: Uuid.nullable().optional(),
    tags: z.array(Tag).max(50).optional(),
    keepAudio: z.boolean().optional().meta({ description: 'keep the audio beyond the retention window (true), or let it go (false)' }),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'change at least one of title, description, folderId, tags, keepAudio')
  .meta({ id: 'PatchNoteRequest', minProperties: 1, anyOf: ['title', 'description', 'folderId', 'tags', 'keepAudio'].map((f) => ({ required: [f] })) })
export type PatchNoteRequest = z.infer<typeof PatchNoteRequest>

export const Folder = z
  .object({ id: Uuid, name: z.string(), noteCount: z.number().int(), createdAt: DateTime, updatedAt: DateTime })
  .meta({ id: 'Folder' })
export type Folder = z.infer<typeof Folder>
export const FolderList = z.object({ folders: z.array(Folder) }).meta({ id: 'FolderList' })
export const FolderIdParams = z.object({ folderId: Uuid })
export const FolderRequest = z.object({ name: nonBlank(100) }).meta({ id: 'FolderRequest' })

/**
 * The same list filters as JSON values, for callers that are not a query string (the MCP tools
 * search_notes and list_recent_notes). The text fields are ListNotesQuery's own schemas; only
 * the number and the lists take their JSON form. Parses into the same shape, so `listNotes`
 * serves both.
 */
export const NoteListFilters = z.object({
  limit: wholeNumber(1, 100).default(20).meta({ description: 'page size, 1 to 100' }),
  cursor: ListNotesQuery.shape.cursor,
  q: ListNotesQuery.shape.q,
  folderId: ListNotesQuery.shape.folderId,
  status: ListNotesQuery.shape.status,
  since: ListNotesQuery.shape.since,
  tags: z.array(z.string().min(1).max(50)).max(20).optional().meta({ description: 'notes carrying ALL of these tags' }),
  origin: z.array(Origin).max(ORIGINS.length).optional().meta({ description: 'notes of any of these origins' }),
})
export type NoteListFilters = z.infer<typeof NoteListFilters>
