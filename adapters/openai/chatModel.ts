// The chat-model port over any OpenAI-compatible endpoint (OpenAI, Azure-compatible gateways,
// vLLM, Ollama, llama.cpp server...). Plain fetch: the wire format is small and stable, and no
// SDK download is needed. Configured by LLM_BASE_URL (…/v1), LLM_API_KEY, LLM_MODEL.
import { ChatModelError, type ChatModel, type ChatRequest, type ChatResponse } from '../../ports/chatModel.ts'

export interface OpenAiChatOptions {
  /** Base URL ending in /v1, e.g. https://api.openai.com/v1 */
  baseUrl: string
  apiKey: string | null
  model: string
  timeoutMs?: number
  fetch?: typeof fetch
}

interface CompletionBody {
  model?: string
  choices?: { message?: { content?: string | null } }[]
  error?: { message?: string }
}

export function openAiChatModel(options: OpenAiChatOptions): ChatModel {
  const base = options.baseUrl.replace(/\/+$/, '')
  const doFetch = options.fetch ?? fetch
  return {
    provider: new URL(base).host,
    model: options.model,
    async complete(req: ChatRequest): Promise<ChatResponse> {
      const body: Record<string, unknown> = { model: options.model, messages: req.messages }
      if (req.temperature !== undefined) body.temperature = req.temperature
      if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens
      if (req.jsonSchema) body.response_format = { type: 'json_schema', json_schema: { name: req.jsonSchema.name, schema: req.jsonSchema.schema, strict: false } }
      const timeout = AbortSignal.timeout(options.timeoutMs ?? 120_000)
      let res: Response
      try {
        res = await doFetch(`${base}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
          body: JSON.stringify(body),
          signal: req.signal ? AbortSignal.any([req.signal, timeout]) : timeout,
        })
      } catch (err) {
        throw new ChatModelError(`chat endpoint unreachable: ${(err as Error).message}`, null)
      }
      const text = await res.text()
      let parsed: CompletionBody = {}
      try {
        parsed = JSON.parse(text) as CompletionBody
      } catch {
        // Reported below with the status.
      }
      if (!res.ok) throw new ChatModelError(`chat endpoint answered ${res.status}: ${parsed.error?.message ?? text.slice(0, 200)}`, res.status)
      const content = parsed.choices?.[0]?.message?.content
      if (typeof content !== 'string') throw new ChatModelError('chat endpoint answered without a message', res.status)
      return { content, model: parsed.model ?? options.model }
    },
  }
}
