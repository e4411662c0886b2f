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
  /**
   * `finishReason`: the server's `finish_reason` when it gave one (`length`: the answer was cut by
   * the token limit, and must not reach a lead as it is).
   */
  { ok: true; message: { content: string | null; tool_calls?: ChatToolCall[] }; finishReason?: string } | ChatFailure;

/**
 * `retryable` follows the official SDK's rules (408, 409, 429, 5xx, network, and a 2xx answer that
 * is not a valid completion) after the client's own retries are spent; `insufficient_quota` is
 * never retryable: a human must act; `context_overflow`: the request is longer than the model takes.
 */
export interface ChatFailure {
  ok: false;
  kind: 'insufficient_quota' | 'retryable' | 'fatal' | 'context_overflow';
  message: string;
  httpStatus?: number;
  /** The wait the server asked for (Retry-After), when it was longer than the client would wait itself. */
  retryAfterMs?: number;
  /** Not tried: the workspace's model calls are all in use (src/agent/model-gate.ts); no attempt was spent. */
  deferred?: boolean;
}

export interface ChatModel {
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>;
}
