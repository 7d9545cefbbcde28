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

/**
 * Every price table that has been in force, oldest first, each from an instant (UTC). The
 * auditor holds each charge against the table in force when it was made, so a change of price
 * is a new entry here, never an edit of an old one.
 */
export const PRICE_HISTORY: readonly { from: string; prices: Readonly<Record<string, Price>> }[] = [{ from: '1970-01-01T00:00:00.000Z', prices: PRICES }]

/** The price of `operation` in the table in force at `at` (null: not a priced operation then). */
export function priceInForce(operation: string, at: string): { price: Price; since: string } | null {
  const table = [...PRICE_HISTORY].reverse().find((t) => t.from <= at) ?? null
  if (!table) return null
  const price = Object.values(table.prices).find((p) => p.operation === operation)
  return price ? { price, since: table.from } : null
}

/** Null when `cost` is what the table asks for `operation` at `at`, else why not. */
export function priceMismatch(operation: string, cost: number, at: string): string | null {
  const found = priceInForce(operation, at)
  if (!found) return `operation "${operation}" has no price in the table in force at ${at}`
  const { price, since } = found
  const ok = price.per === 'request' ? cost === price.credits : price.credits > 0 && cost > 0 && cost % price.credits === 0
  if (ok) return null
  const asked = price.per === 'request' ? `${price.credits}` : `a positive multiple of ${price.credits} (per ${price.per})`
  return `${operation} cost ${cost}; the price table in force since ${since} asks ${asked}`
}
