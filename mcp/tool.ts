// An MCP tool as data: its name (one of the spec's 21, so its cost class comes from the spec's
// table and is never restated here), the contract schemas of its input and result, and a handler
// that calls the same command or query as the REST route it mirrors. `mcp/server.ts` registers
// every tool in `mcp/tools/index.ts` with `McpServer.registerTool`; `/mcp/info` lists them.
import type { z } from 'zod'
import type { Application } from '../commands/application.ts'
import type { Caller } from '../commands/context.ts'
import type { ToolCost, ToolName } from '../domain/mcp/tools.ts'

export interface ToolProgress {
  /** Must grow with every notification (MCP progress rule). */
  progress: number
  total?: number
  message?: string
}

export interface ToolContext {
  app: Application
  /** The account the call acts for: the key's or the OAuth grant's, or the demo library's. */
  caller: Caller
  /**
   * The credential the per-operation limits count by: `key:<keyId>` (the same bucket as the REST
   * routes) or `grant:<grantId>`.
   */
  credential: string
  /** This tool's row of the spec's cost-class table. */
  cost: ToolCost
  /** Called through the public demo endpoint. */
  demo: boolean
  /** Aborted when the client cancels or hangs up. */
  signal: AbortSignal
  /** Sends notifications/progress when the client asked for progress (a progressToken); otherwise nothing. */
  progress(update: ToolProgress): Promise<void>
}

type AnyObject = z.ZodObject

export interface ToolDef<I extends AnyObject = AnyObject, O extends AnyObject = AnyObject> {
  name: ToolName
  title: string
  /** What it does and what it returns; the cost line from the table is appended when registered. */
  description: string
  input: I
  /** The structured result: the REST response schema where the tool has a REST twin. */
  output: O
  /** Changes nothing: offered by the demo endpoint and annotated readOnlyHint. */
  readOnly: boolean
  /** May overwrite what is there (MCP destructiveHint), e.g. replacing transcript text. */
  destructive?: boolean
  /** Repeating a call with the same arguments changes nothing more (MCP idempotentHint). */
  idempotent?: boolean
  /** Reaches beyond the service, e.g. fetches a link (MCP openWorldHint). */
  openWorld?: boolean
  /** A result field holding bytes (a Buffer): sent as a content block of this type, left out of the structured result. */
  binary?: { field: string; mimeType: string }
  handle(ctx: ToolContext, args: z.output<I>): Promise<z.input<O>>
}

// Types stay precise where a tool is written while the registry holds tools of every shape.
export const defineTool = <I extends AnyObject, O extends AnyObject>(t: ToolDef<I, O>) => t as unknown as ToolDef
