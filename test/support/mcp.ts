// A whole service listening on real ports for MCP tests: the REST host (with POST /mcp/stream and
// the OAuth authorization server) and the {mcp_url} listener (MCP at its root, the demo at
// /demo), with the demo library seeded. Clients are the SDK's own, over streamable HTTP.
import { freePorts } from './ports.ts'
import { randomUUID } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FastifyInstance } from 'fastify'
import { buildMcpApp } from '../../mcp/http.ts'
import { seedDemoDataset } from '../../app/demoDataset.ts'
import { noteStream } from '../../domain/notes/note.ts'
import { testService, type TestService, type TestServiceOptions } from './service.ts'


export { freePorts }

export interface McpTestService extends TestService {
  base: string
  mcpUrl: string
  mcpApp: FastifyInstance
  /** An SDK client connected to `url` with extra request headers (e.g. Authorization). */
  connect(url: string, headers?: Record<string, string>): Promise<Client>
}

export async function mcpTestService(options: TestServiceOptions = {}): Promise<McpTestService> {
  const [port, mcpPort] = await freePorts(2)
  const s = await testService({ ...options, env: { PORT: String(port), MCP_PORT: String(mcpPort), ...options.env } })
  await s.app.listen({ port: port!, host: '127.0.0.1' })
  const mcpApp = buildMcpApp(s.services)
  await mcpApp.listen({ port: mcpPort!, host: '127.0.0.1' })
  await seedDemoDataset(s.services)
  const clients: Client[] = []
  return {
    ...s,
    base: s.config.publicBaseUrl,
    mcpUrl: s.config.mcp.publicUrl,
    mcpApp,
    async connect(url, headers = {}) {
      const client = new Client({ name: 'test-client', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      clients.push(client)
      return client
    },
    async close() {
      for (const c of clients) await c.close().catch(() => {})
      await mcpApp.close()
      await s.close()
    },
  }
}

/**
 * Stands in for the transcription pipeline (issue 4), which is not in this branch: appends the
 * note events the pipeline appends when a transcription succeeds, then waits for the read model.
 */
export async function markTranscribed(s: TestService, noteId: string, lines: [speaker: string, text: string][], language = 'en') {
  const segments = lines.map(([speakerLabel, text], i) => ({ id: randomUUID(), sequence: i, startMs: i * 5000, endMs: i * 5000 + 4500, speakerLabel, text, confidence: 0.9, locale: language, words: null }))
  const durationSeconds = Math.ceil((lines.length * 5000) / 1000)
  const at = new Date().toISOString()
  const r = await s.services.events.appendToStream(
    noteStream.of(noteId),
    [
      { id: randomUUID(), type: 'NoteTranscribed', data: { transcript: { language, languagesDetected: [language], durationSeconds, engine: 'test', provider: null, model: null, segments }, at } },
      { id: randomUUID(), type: 'NoteReady', data: { durationSeconds, language, at } },
    ],
    { expectedRevision: 'stream_exists' },
  )
  await s.services.sync.waitFor('notes', r.lastGlobalPosition)
}

/** The structured result of a tool call, or a failure of the test when the tool answered an error. */
export function structured<T = Record<string, any>>(result: unknown): T {
  const r = result as { isError?: boolean; structuredContent?: unknown; content?: { text?: string }[] }
  if (r.isError) throw new Error(`tool error: ${r.content?.[0]?.text}`)
  return r.structuredContent as T
}

/** The error body `{ error, message, ... }` of a tool error. */
export function toolErrorBody(result: unknown): Record<string, any> {
  const r = result as { isError?: boolean; content?: { text?: string }[] }
  if (!r.isError) throw new Error('expected a tool error')
  return JSON.parse(r.content?.[0]?.text ?? '{}')
}
