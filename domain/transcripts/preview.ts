// What the free plan sees of a transcript's text, wherever that text leaves the service: the
// MCP tools (get_transcript_segments, get_transcript_translation, get_note, the echo of
// replace_in_transcript), the REST routes and exports, and the dashboard. The spec's cost class
// names get_transcript_segments and get_transcript_translation ("free, but the content is
// truncated on the free plan"); any other way to the same text gets the same preview, or the
// preview would be a formality. Derived content (analyses, outlines, answers) is not cut here.
import type { Plan } from '../credits/plans.ts'

/**
 * The segments from the start, in order, while both bounds hold; a first segment longer than the
 * character bound is cut inside. Longer content says so in `truncated` and `truncation` (counts,
 * this rule, how to get the rest).
 */
export const FREE_PLAN_PREVIEW = { maxSegments: 20, maxChars: 2000 } as const
export const FREE_PLAN_PREVIEW_RULE = `free plan: the first ${FREE_PLAN_PREVIEW.maxSegments} segments from the start, at most ${FREE_PLAN_PREVIEW.maxChars.toLocaleString('en')} characters of text in all`
export const FREE_PLAN_GET_THE_REST = 'Every segment comes with any paid plan (personal or higher): upgrade the account, then read it again.'

export interface TranscriptPreview {
  maxSegments: number
  maxChars: number
  rule: string
  getTheRest: string
}

/** The preview a caller on `plan` gets of transcript text; undefined: all of it. */
export const transcriptPreviewFor = (plan: Plan): TranscriptPreview | undefined =>
  plan === 'free' ? { ...FREE_PLAN_PREVIEW, rule: FREE_PLAN_PREVIEW_RULE, getTheRest: FREE_PLAN_GET_THE_REST } : undefined
