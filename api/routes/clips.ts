// REST twin of the MCP tool extract_clip (a documented extension): the MP3 bytes of a time range.
import { z } from 'zod'
import type { Application } from '../../commands/application.ts'
import { PRICES } from '../../domain/credits/prices.ts'
import { ClipQuery } from '../../contract/clips.ts'
import { NoteIdParams } from '../../contract/notes.ts'
import { defineRoute, type RouteDef } from '../route.ts'

export const clipRoutes = (app: Application): RouteDef[] => [
  defineRoute({
    operationId: 'getNoteClip',
    method: 'GET',
    path: '/v1/notes/:id/clip',
    tag: 'clips',
    summary: 'An MP3 clip of a time range of the note’s audio',
    description: '`startMs` to `endMs` (at most 5 minutes; cut at the end of the audio), mono 64 kbps. 5 credits, refunded when the cut fails. The same command as the MCP tool extract_clip.',
    extension: true,
    params: NoteIdParams,
    notFound: true,
    query: ClipQuery,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: z.string(), description: 'The clip.', contentTypes: { 'audio/mpeg': 'MP3 bytes' } },
    errors: ['invalid_request', 'not_found', 'note_not_ready', 'audio_unavailable', 'insufficient_credits'],
    price: PRICES.clip,
    async handle({ caller, params, query, reply }) {
      const clip = await app.clips.extract(caller, { noteId: params.id, ...query })
      reply
        .type('audio/mpeg')
        .header('content-disposition', `attachment; filename="clip-${clip.noteId}-${clip.startMs}-${clip.endMs}.mp3"`)
        .header('x-clip-start-ms', String(clip.startMs))
        .header('x-clip-end-ms', String(clip.endMs))
      return reply.send(clip.data)
    },
  }),
]
