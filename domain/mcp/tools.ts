// The MCP tools the spec names (part 1) and its cost-class table, as data. `/mcp/info` publishes
// this table, each tool's description quotes it, and a spending tool's command charges the very
// `Price` object its row points at (the same one the REST route and the OpenAPI document use),
// so what the server says a tool costs and what the ledger records cannot drift apart.
import { PRICES, type Price } from '../credits/prices.ts'

/** The 21 tools, named exactly as the spec names them, in its order. */
export const TOOL_NAMES = [
  'search_notes',
  'list_recent_notes',
  'get_note',
  'get_transcript_segments',
  'get_transcript_translation',
  'list_folders',
  'list_highlights',
  'get_outline',
  'list_markers',
  'get_speaker_timeline',
  'import_from_url',
  'wait_for_transcription',
  'generate_ai_notes',
  'generate_outline',
  'replace_in_transcript',
  'suggest_speaker_names',
  'rename_speaker',
  'list_voice_profiles',
  'founder_status',
  'ask_note',
  'extract_clip',
] as const
export type ToolName = (typeof TOOL_NAMES)[number]

/** The spec's three cost classes, with the words it uses for them. */
export const COST_CLASSES = {
  spends_credits: 'spends credits',
  free_truncated_on_free_plan: 'free, but the content is truncated on the free plan',
  free: 'free',
} as const
export type CostClass = keyof typeof COST_CLASSES

export interface ToolCost {
  costClass: CostClass
  /** What a spending tool is charged: the same entry of PRICES its REST twin (or its own command) charges. */
  price: Price | null
}

const free: ToolCost = { costClass: 'free', price: null }
const truncatedOnFree: ToolCost = { costClass: 'free_truncated_on_free_plan', price: null }

export const TOOL_COSTS: Readonly<Record<ToolName, ToolCost>> = {
  search_notes: free,
  list_recent_notes: free,
  get_note: free,
  get_transcript_segments: truncatedOnFree,
  get_transcript_translation: truncatedOnFree,
  list_folders: free,
  list_highlights: free,
  get_outline: free,
  list_markers: free,
  get_speaker_timeline: free,
  import_from_url: { costClass: 'spends_credits', price: PRICES.import },
  wait_for_transcription: free,
  generate_ai_notes: { costClass: 'spends_credits', price: PRICES.analysis },
  generate_outline: { costClass: 'spends_credits', price: PRICES.outline },
  replace_in_transcript: free,
  suggest_speaker_names: free,
  rename_speaker: free,
  list_voice_profiles: free,
  founder_status: free,
  ask_note: { costClass: 'spends_credits', price: PRICES.askNote },
  extract_clip: { costClass: 'spends_credits', price: PRICES.clip },
}

/**
 * What an approved client can do that the account's owner must know before approving, in the
 * consent page's words: every tool that is not read-only (a test holds this to the registry).
 * Those with a price in TOOL_COSTS spend credits; the others change notes and transcripts.
 */
export const CONSENT_ACTIONS: Readonly<Partial<Record<ToolName, string>>> = {
  import_from_url: 'import links as notes',
  generate_ai_notes: 'generate AI notes',
  generate_outline: 'generate outlines',
  ask_note: 'ask questions about notes',
  extract_clip: 'cut audio clips',
  replace_in_transcript: 'find and replace text in transcripts',
  suggest_speaker_names: 'suggest speaker names',
  rename_speaker: 'name speakers',
}

/** One line for a tool's description, so an AI client sees the cost before calling. */
export function costLine(tool: ToolName): string {
  const { costClass, price } = TOOL_COSTS[tool]
  if (costClass === 'spends_credits' && price) return `Cost: spends credits (${price.credits} per ${price.per}${price.note ? `; ${price.note}` : ''}).`
  return `Cost: ${COST_CLASSES[costClass]}.`
}
