// Audio clips of a note (MCP extract_clip; REST extension GET /v1/notes/{id}/clip).
import { z } from 'zod'
import { Uuid, intFromQuery, wholeNumber } from './common.ts'

const Ms = wholeNumber(0, 24 * 3600 * 1000)
const msFromQuery = intFromQuery(0, 24 * 3600 * 1000)

export const ClipRange = z.object({
  startMs: Ms.meta({ description: 'where the clip starts, in ms from the start of the audio' }),
  endMs: Ms.meta({ description: 'where it ends (at most 5 minutes after startMs; cut at the end of the audio)' }),
})

export const ClipQuery = z.object({
  startMs: msFromQuery.meta({ description: 'ms from the start of the audio' }),
  endMs: msFromQuery.meta({ description: 'must be greater than startMs, at most 5 minutes (300000 ms) after it; cut at the end of the audio' }),
})

export const ExtractClipInput = ClipRange.extend({ noteId: Uuid })

export const ClipInfo = z
  .object({
    noteId: Uuid,
    startMs: z.number().int(),
    endMs: z.number().int(),
    durationMs: z.number().int(),
    mimeType: z.literal('audio/mpeg'),
    sizeBytes: z.number().int(),
  })
  .meta({ id: 'ClipInfo' })
