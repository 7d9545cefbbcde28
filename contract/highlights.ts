// Highlights and markers of a note: the moments its analyses and outline point at, with their
// times. Queries for the MCP tools list_highlights and list_markers (and REST extensions).
import { z } from 'zod'
import { Uuid } from './common.ts'

export const HIGHLIGHT_KINDS = ['key_point', 'action_item', 'decision', 'question', 'chapter'] as const

export const Highlight = z
  .object({
    kind: z.enum(HIGHLIGHT_KINDS),
    text: z.string(),
    startMs: z.number().int(),
    endMs: z.number().int().nullable().meta({ description: 'chapters only' }),
    time: z.string().meta({ description: 'mm:ss of startMs' }),
    template: z.string().nullable().meta({ description: 'the analysis template it comes from; null for chapters' }),
    assignee: z.string().nullable(),
    deadline: z.string().nullable(),
  })
  .meta({ id: 'Highlight' })
export type Highlight = z.infer<typeof Highlight>

export const HighlightList = z.object({ noteId: Uuid, highlights: z.array(Highlight) }).meta({ id: 'HighlightList', description: 'In the order they are said; items without a time are left out.' })
export type HighlightList = z.infer<typeof HighlightList>

export const Marker = z
  .object({ startMs: z.number().int(), endMs: z.number().int(), time: z.string(), title: z.string() })
  .meta({ id: 'Marker', description: 'A chapter marker of the outline.' })
export const MarkerList = z.object({ noteId: Uuid, markers: z.array(Marker) }).meta({ id: 'MarkerList' })
export type MarkerList = z.infer<typeof MarkerList>

export const HighlightQuery = z.object({
  template: z.string().max(40).optional().meta({ description: 'only the items of this analysis template (chapters are always included)' }),
})
