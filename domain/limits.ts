// Limits on single operations, on top of the per-credential request rate limit (spec part 8).
// Each is counted per credential (an API key, or an OAuth grant over MCP) in one bucket, whatever
// the edge the call comes through: REST and MCP share the count.

export interface OperationLimit {
  /** The counter's name: one bucket per limit, shared by every edge. */
  bucket: string
  max: number
  windowSeconds: number
}

export const OPERATION_LIMITS = {
  /** POST /v1/notes/{id}/speakers/suggest and MCP suggest_speaker_names: 10 per hour. */
  speakersSuggest: { bucket: 'speakers-suggest', max: 10, windowSeconds: 3600 },
} as const satisfies Record<string, OperationLimit>
