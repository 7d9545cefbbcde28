// The MCP server: one McpServer per HTTP request (the transport is stateless), with every tool of
// the registry (only the read-only ones for the demo endpoint) registered through
// `McpServer.registerTool` with its contract schemas. A tool's result goes out both as
// structuredContent (checked against the output schema) and as JSON text for clients without
// structured results; a domain error goes out as a tool error whose text is the spec's error
// body `{ error, message, ...extra }`.
import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Application } from '../commands/application.ts'
import type { Caller } from '../commands/context.ts'
import { isDomainError, type ErrorCode } from '../domain/errors.ts'
import { REFUSAL_ADVICE } from '../domain/advice.ts'
import { TOOL_COSTS, costLine } from '../domain/mcp/tools.ts'
import { errorBody, unavailable } from '../api/errors.ts'
import { TOOLS } from './tools/index.ts'
import type { ToolContext, ToolDef } from './tool.ts'

export const MCP_SERVER_NAME = 'notes-service'

const INSTRUCTIONS =
  'Notes of audio and video. Find and read them: search_notes, list_recent_notes, get_note, list_folders; the transcript with times and speakers: get_transcript_segments, get_transcript_translation, get_speaker_timeline. ' +
  'What the analyses found: list_highlights, get_outline, list_markers; make them: generate_ai_notes, generate_outline; ask with citations: ask_note. ' +
  'Edit: replace_in_transcript, rename_speaker, suggest_speaker_names; voices: list_voice_profiles. Import a link: import_from_url, then wait_for_transcription. Plan and credits: founder_status. ' +
  'Every tool description ends with its cost. Errors come back as tool errors whose text is JSON { error, message, ... } with the REST API’s error codes.'

export interface McpServerOptions {
  /** The account every call acts for, given the call's request id. */
  caller: (requestId: string) => Caller
  /** What the per-operation limits count by (api/http/authentication.ts `limiterKey`). */
  credential: string
  /** Read-only tools only, over the sample library. */
  demo: boolean
  log: (err: unknown, msg: string) => void
}

/** The tools an endpoint offers: all of them, or for the demo only those that change nothing. */
export const toolsFor = (demo: boolean): readonly ToolDef[] => (demo ? TOOLS.filter((t) => t.readOnly) : TOOLS)

/**
 * MCP wants a tool's outputSchema to be an object schema at its root; a contract schema with a
 * name (`.meta({ id })`) would become a `$ref` there. The same fields under an anonymous root
 * validate exactly alike, as long as the root itself carries no refinement (checked).
 */
export function rootObject<T extends z.ZodObject>(schema: T): z.ZodObject<T['shape']> {
  if ((schema._zod.def.checks ?? []).length > 0) throw new Error('an MCP output schema must not refine its root object')
  return z.object(schema.shape)
}

const nextStep = (code: ErrorCode) => {
  const advice = REFUSAL_ADVICE[code]
  return advice ? { next: advice.next } : {}
}

export function toolError(thrown: unknown, log: McpServerOptions['log']): CallToolResult {
  const err = unavailable(thrown) ?? thrown
  // The same advice the dashboard shows for this code (domain/advice.ts), as the agent's next step.
  const body = isDomainError(err) ? errorBody(err.code, err.message, { ...err.extra, ...nextStep(err.code) }) : errorBody('internal_error', 'The tool failed on our side.')
  if (!isDomainError(err)) log(err, 'MCP tool failed')
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }
}

/**
 * The SDK refuses some calls itself (arguments that fail the tool's input schema, a tool that does
 * not exist here) with a tool error of plain text; ours carry the same JSON body as every other
 * tool error, with the REST codes: `invalid_request` and `not_found`.
 */
export function sdkToolError(message: string): { result: CallToolResult; internal: boolean } {
  const text = message.replace(/^MCP error -?\d+: /, '')
  const unknown = /^Tool (\S+) (not found|disabled)$/.exec(text)
  const body = unknown
    ? errorBody('not_found', `No tool named ${unknown[1]} on this endpoint; tools/list names them.`)
    : /^Input validation error/.test(text)
      ? errorBody('invalid_request', text.replace(/^Input validation error: /, ''))
      : errorBody('internal_error', 'The tool failed on our side.')
  return { result: { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }, internal: body.error === 'internal_error' }
}

export function buildMcpServer(app: Application, options: McpServerOptions): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, title: 'Notes: transcripts and analysis of audio and video', version: app.settings.version }, { instructions: INSTRUCTIONS })
  // The SDK's hook for its own refusals is private in its types, not in its code.
  ;(server as unknown as { createToolError: (message: string) => CallToolResult }).createToolError = (message) => {
    const { result, internal } = sdkToolError(message)
    if (internal) options.log(new Error(message), 'MCP tool failed in the SDK')
    return result
  }
  for (const tool of toolsFor(options.demo)) {
    const cost = TOOL_COSTS[tool.name]
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: `${tool.description} ${costLine(tool.name)}`,
        inputSchema: tool.input,
        outputSchema: rootObject(tool.output),
        annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: tool.destructive ?? false, idempotentHint: tool.idempotent ?? false, openWorldHint: tool.openWorld ?? false },
        _meta: { costClass: cost.costClass, ...(cost.price ? { credits: cost.price.credits, per: cost.price.per } : {}) },
      },
      (async (args: unknown, extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Promise<CallToolResult> => {
        const caller = options.caller(randomUUID())
        const progressToken = extra._meta?.progressToken
        const ctx: ToolContext = {
          app,
          caller,
          credential: options.credential,
          cost,
          demo: options.demo,
          signal: extra.signal,
          async progress(p) {
            if (progressToken === undefined) return
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, ...p } })
          },
        }
        try {
          const result = (await tool.handle(ctx, args as never)) as Record<string, unknown>
          if (tool.binary) {
            const { [tool.binary.field]: bytes, ...structured } = result
            const block = tool.binary.mimeType.startsWith('audio/') ? 'audio' : 'image'
            return {
              content: [{ type: block, data: (bytes as Buffer).toString('base64'), mimeType: tool.binary.mimeType }, { type: 'text', text: JSON.stringify(structured) }],
              structuredContent: structured,
            }
          }
          return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result }
        } catch (err) {
          return toolError(err, options.log)
        }
      }) as never,
    )
  }
  return server
}
