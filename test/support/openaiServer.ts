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

/** The multipart form of a request (file uploads to `/v1/audio/transcriptions`). */
export function formOf(req: RecordedRequest): Promise<FormData> {
  return new Response(new Uint8Array(req.body), { headers: { 'content-type': String(req.headers['content-type'] ?? '') } }).formData()
}

export interface ScriptedSegment {
  start: number
  end: number
  text: string
  speaker?: string
}

/**
 * A `verbose_json` transcription in OpenAI's documented shape (segments with ids, seek, tokens,
 * avg_logprob...; top-level `words` when word timestamps are asked for), optionally with the
 * `speaker` field diarizing providers add to segments.
 */
export function verboseJson(o: { language?: string; duration: number; segments: ScriptedSegment[]; words?: boolean }) {
  const words = o.segments.flatMap((s) => {
    const ws = s.text.trim().split(/\s+/)
    const step = (s.end - s.start) / ws.length
    return ws.map((w, i) => ({ word: w, start: +(s.start + i * step).toFixed(3), end: +(s.start + (i + 1) * step).toFixed(3) }))
  })
  return {
    task: 'transcribe',
    language: o.language ?? 'english',
    duration: o.duration,
    text: o.segments.map((s) => s.text).join(' '),
    segments: o.segments.map((s, i) => ({
      id: i,
      seek: 0,
      start: s.start,
      end: s.end,
      text: ` ${s.text}`,
      tokens: [50364, 440, 50414],
      temperature: 0,
      avg_logprob: -0.25,
      compression_ratio: 1.2,
      no_speech_prob: 0.01,
      ...(s.speaker !== undefined ? { speaker: s.speaker } : {}),
    })),
    ...(o.words === false ? {} : { words }),
  }
}
