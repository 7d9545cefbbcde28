// A chat model behind any OpenAI-compatible `/v1/chat/completions` endpoint. Features build
// their own ports on top (translation, analysis, answers) and validate what comes back with
// their zod schemas; this port only carries messages.

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

export interface ChatRequest {
  messages: ChatMessage[]
  /** Ask for a JSON object matching this JSON Schema (response_format json_schema). */
  jsonSchema?: { name: string; schema: Record<string, unknown> }
  temperature?: number
  maxTokens?: number
  signal?: AbortSignal
}

export interface ChatResponse {
  content: string
  /** The model that answered, as the provider reports it. */
  model: string
}

export interface ChatModel {
  /** Provider name for the records, e.g. the endpoint's host. */
  readonly provider: string
  readonly model: string
  complete(request: ChatRequest): Promise<ChatResponse>
}

export class ChatModelError extends Error {
  override readonly name = 'ChatModelError'
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message)
  }
}
