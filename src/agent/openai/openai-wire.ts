import { z } from 'zod';

// The chat-completions wire format (OpenAI's chat-completions reference, OpenAPI `CreateChatCompletionResponse` and
// `ErrorResponse`), shared by our client (which reads it) and our simulator (which writes it).

/** OpenAI's error body: all four keys are always present, `param` and `code` may be null. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAIError(
  message: string,
  type: string,
  param: string | null = null,
  code: string | null = null,
): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

// Lenient on purpose: OpenAI-compatible servers (Ollama, vLLM, LiteLLM, …) differ in details
// such as a missing `type` on tool calls or `arguments` sent as an object instead of JSON text.
const ToolCallSchema = z.object({
  id: z.string().min(1),
  type: z.string().nullish(),
  function: z.object({
    name: z.string().min(1),
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  }),
});

export const ChatCompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z.array(ToolCallSchema).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
});
export type ChatCompletionBody = z.output<typeof ChatCompletionSchema>;

/**
 * The parts of an error body we use, from OpenAI's `{error:{message,type,param,code}}`, vLLM's
 * older top-level `{object:"error",message,type,code}` or a bare `{error:"text"}`.
 */
export function readErrorBody(text: string): { message?: string; type?: string; code?: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof body !== 'object' || body === null) return {};
  const b = body as Record<string, unknown>;
  const inner = typeof b.error === 'object' && b.error !== null ? (b.error as Record<string, unknown>) : b;
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
  const out: { message?: string; type?: string; code?: string } = {};
  const message = str(inner.message) ?? str(b.error);
  const type = str(inner.type);
  const code = str(inner.code);
  if (message !== undefined) out.message = message;
  if (type !== undefined) out.type = type;
  if (code !== undefined) out.code = code;
  return out;
}
