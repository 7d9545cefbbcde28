// A local HTTP server that speaks the OpenAI-compatible wire format for the tests: each test
// decides what `/v1/chat/completions` (and any other path) answers and sees what was asked.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingMessage['headers']
  body: Buffer
  json(): any
}

export type Responder = (req: RecordedRequest) => { status?: number; json?: unknown; body?: string | Buffer; headers?: Record<string, string> } | Promise<{ status?: number; json?: unknown; body?: string | Buffer; headers?: Record<string, string> }>

/** A chat completion in the provider's response shape. */
export const chatCompletion = (content: string, model = 'test-model') => ({
  id: 'chatcmpl-test',
  object: 'chat.completion',
  created: Math.floor(Date.now() / 1000),
  model,
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
})

export async function startOpenAiServer(respond: Responder) {
  const requests: RecordedRequest[] = []
  let responder = respond
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks)
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0]!, headers: req.headers, body, json: () => JSON.parse(body.toString('utf8')) }
    requests.push(recorded)
    try {
      const out = await responder(recorded)
      res.writeHead(out.status ?? 200, { 'content-type': out.json !== undefined ? 'application/json' : 'text/plain', ...out.headers })
      res.end(out.json !== undefined ? JSON.stringify(out.json) : (out.body ?? ''))
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: String(err) } }))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    respondWith(r: Responder) {
      responder = r
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
