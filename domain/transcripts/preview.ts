// What the free plan sees of a transcript's text, wherever that text leaves the service: the
// MCP tools (get_transcript_segments, get_transcript_translation, get_note, the echo of
// replace_in_transcript), the REST routes and exports, and the dashboard. The spec's cost class
// names get_transcript_segments and get_transcript_translation ("free, but the content is
// truncated on the free plan"); any other way to the same text gets the same preview, or the
// preview would be a formality. That includes every answer that depends on the text (issue 26,
// item 5): a search matches the title, the description and the preview only (the notes
// projection keeps `previewSearchTokens`), replace_in_transcript edits and counts only what the
// preview shows, ask_note reads (and quotes) only preview segments, and a speaker's name evidence
// quotes no segment past it. `cut` below is the one rule all of them apply. Analyses, outlines
// and deliverables are generated only on paid plans.
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

/** Cuts content for callers whose plan gets a preview only; a TranscriptPreview is one. */
export interface ContentLimit {
  maxSegments?: number
  /** Characters of segment text, summed over the segments shown. */
  maxChars?: number
  /** Said in `truncation` when it cut. */
  rule?: string
  getTheRest?: string
}

/** How much of the content a cut left: what the result's `truncation` reports. */
export interface CutCounts {
  shownSegments: number
  totalSegments: number
  shownCharacters: number
  totalCharacters: number
  rule?: string
  getTheRest?: string
}

/**
 * The segments a caller with `limit` sees whole: the preview without a first segment it cut
 * inside. What an edit may touch and a quote may cite on such a plan.
 */
export function shownWhole<T extends { text: string }>(segments: readonly T[], limit: ContentLimit | undefined): T[] {
  return cut(segments, limit).shown.filter((x, i) => x.text === segments[i]!.text)
}

/** The segments a caller with `limit` sees, in the order given (the transcript's). */
export function cut<T extends { text: string }>(segments: readonly T[], limit: ContentLimit | undefined): { shown: T[]; truncated: boolean; counts: CutCounts } {
  const totalCharacters = segments.reduce((n, s) => n + s.text.length, 0)
  const whole = { shown: [...segments], truncated: false, counts: { shownSegments: segments.length, totalSegments: segments.length, shownCharacters: totalCharacters, totalCharacters } }
  if (!limit) return whole
  const shown: T[] = []
  let chars = 0
  for (const s of segments) {
    if (limit.maxSegments !== undefined && shown.length >= limit.maxSegments) break
    if (limit.maxChars !== undefined && chars + s.text.length > limit.maxChars) {
      if (shown.length === 0) shown.push({ ...s, text: s.text.slice(0, limit.maxChars) })
      break
    }
    chars += s.text.length
    shown.push(s)
  }
  const truncated = shown.length < segments.length || shown.some((s, i) => s.text !== segments[i]!.text)
  if (!truncated) return whole
  const said = { ...(limit.rule ? { rule: limit.rule } : {}), ...(limit.getTheRest ? { getTheRest: limit.getTheRest } : {}) }
  return { shown, truncated, counts: { shownSegments: shown.length, totalSegments: segments.length, shownCharacters: shown.reduce((n, s) => n + s.text.length, 0), totalCharacters, ...said } }
}

