// Who is calling, as every command and query sees it, whichever edge (REST, MCP, dashboard) the
// call came through.
import type { Plan } from '../domain/credits/plans.ts'
import { DEMO_ACCOUNT_ID, DEMO_PLAN } from '../domain/demo/dataset.ts'

export interface Caller {
  accountId: string
  plan: Plan
  /** The API key used, when the call carried one. */
  keyId: string | null
  /** Correlates the events and charges of one request. */
  requestId: string
  via: 'rest' | 'mcp' | 'dashboard' | 'admin'
}

/** Who the demo endpoint acts as: the sample account, never a caller's. */
export const demoCaller = (requestId: string): Caller => ({ accountId: DEMO_ACCOUNT_ID, plan: DEMO_PLAN, keyId: null, requestId, via: 'mcp' })
