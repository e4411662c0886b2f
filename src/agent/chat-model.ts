// Our small interface to a chat model. The real implementation is an OpenAI-compatible
// chat-completions client (OpenAI's chat-completions reference); tests and the demo point it at the local simulator.

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatToolDeclaration {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatToolDeclaration[];
}

export type ChatResult =
  | { ok: true; message: { content: string | null; tool_calls?: ChatToolCall[] } }
  /**
   * `retryable` follows the official SDK's rules (408, 409, 429, 5xx, network) after the client's
   * own retries are spent; `insufficient_quota` is never retryable: a human must act.
   */
  | { ok: false; kind: 'insufficient_quota' | 'retryable' | 'fatal'; message: string; httpStatus?: number };

export interface ChatModel {
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>;
}
