// What each priced operation costs in credits (spec part 8). The routes charge from here and the
// OpenAPI document publishes this table as `x-service-credits`, so the two can never disagree.

export interface Price {
  operation: string
  /** REST method and path, or the MCP tool. */
  endpoint: string
  credits: number
  per: 'request' | 'started minute of audio' | 'template' | 'clip'
  note?: string
}

export const PRICES = {
  import: {
    operation: 'import',
    endpoint: 'POST /v1/notes (audioUrl)',
    credits: 50,
    per: 'started minute of audio',
    note: '50 are held when the link is accepted; the final price is captured once the duration is known.',
  },
  transcriptRead: { operation: 'transcript', endpoint: 'GET /v1/notes/{id}/transcript', credits: 1, per: 'request' },
  analysis: { operation: 'analysis', endpoint: 'POST /v1/notes/{id}/analysis', credits: 100, per: 'template', note: 'the whole price is held at once; captured per template that comes out, the rest released' },
  outline: { operation: 'outline', endpoint: 'GET /v1/notes/{id}/outline?generate=1', credits: 50, per: 'request' },
  askNote: { operation: 'ask', endpoint: 'POST /v1/notes/{id}/ask', credits: 10, per: 'request' },
  askLibrary: { operation: 'ask', endpoint: 'POST /v1/ask', credits: 10, per: 'request' },
  translation: { operation: 'translation', endpoint: 'POST /v1/notes/{id}/transcript/translation', credits: 0, per: 'request', note: 'free the first time per note and language; repeating or completing is free' },
  deliverable: { operation: 'deliverable', endpoint: 'POST /v1/notes/{noteId}/deliverables', credits: 300, per: 'request' },
  clip: { operation: 'clip', endpoint: 'MCP extract_clip', credits: 5, per: 'clip', note: 'an MP3 of a time range' },
} as const satisfies Record<string, Price>

/**
 * An import whose transcript the source publishes (podcast:transcript, a subtitle track, a video
 * site's captions) runs no speech engine: it costs the import's flat 50, whatever its length.
 */
export const PUBLISHED_TRANSCRIPT_CREDITS = PRICES.import.credits
