// Who is calling, as every command and query sees it, whichever edge (REST, MCP, dashboard) the
// call came through.
import type { Plan } from '../domain/credits/plans.ts'

export interface Caller {
  accountId: string
  plan: Plan
  /** The API key used, when the call carried one. */
  keyId: string | null
  /** Correlates the events and charges of one request. */
  requestId: string
  via: 'rest' | 'mcp' | 'dashboard' | 'admin'
}
