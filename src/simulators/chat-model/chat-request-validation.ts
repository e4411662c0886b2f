import type { ChatMessage, ChatToolCall, ChatToolDeclaration } from '../../agent/chat-model.ts';
import { openAIError, type OpenAIErrorBody } from '../../agent/openai/openai-wire.ts';

// Request checks of the chat-completions simulator, answered with OpenAI's 400 bodies. The
// wordings are those OpenAI sends for these mistakes as far as we have seen them; the exact
// `code` and `param` strings of some are not confirmed by OpenAI's chat-completions reference. Only what our client and
// the agent loop can get wrong is modelled in depth; other parameters are accepted as they are.

export interface ValidChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatToolDeclaration[];
}

export type Validation = { ok: true; request: ValidChatRequest } | { ok: false; body: OpenAIErrorBody };

const KNOWN_PARAMETERS = new Set(
  (
    'model messages tools tool_choice parallel_tool_calls temperature top_p max_tokens max_completion_tokens n ' +
    'stop stream stream_options seed user response_format frequency_penalty presence_penalty logprobs ' +
    'top_logprobs logit_bias metadata store service_tier reasoning_effort modalities audio prediction ' +
    'web_search_options safety_identifier prompt_cache_key verbosity function_call functions'
  ).split(' '),
);
const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];
const FUNCTION_NAME = /^[a-zA-Z0-9_-]+$/;

class Invalid extends Error {
  readonly body: OpenAIErrorBody;
  constructor(message: string, param: string | null, code: string | null) {
    super(message);
    this.body = openAIError(message, 'invalid_request_error', param, code);
  }
}

const missing = (param: string) =>
  new Invalid(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
const wrongType = (param: string, expected: string, value: unknown) =>
  new Invalid(
    `Invalid type for '${param}': expected ${expected}, but got ${typeName(value)} instead.`,
    param,
    'invalid_type',
  );

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a decimal';
  if (typeof v === 'object') return 'an object';
  return typeof v === 'string' ? 'a string' : `a ${typeof v}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function validateChatRequest(rawBody: string): Validation {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return {
      ok: false,
      body: openAIError(
        'We could not parse the JSON body of your request. ' +
          "(HINT: This likely means you aren't using your HTTP library correctly. " +
          'The OpenAI API expects a JSON payload, but what was sent was not valid JSON. ' +
          'If you have trouble figuring out how to fix this, ' +
          'please contact us through our help center at help.openai.com.)',
        'invalid_request_error',
      ),
    };
  }
  try {
    return { ok: true, request: check(body) };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, body: err.body };
    throw err;
  }
}

function check(body: unknown): ValidChatRequest {
  if (!isObject(body))
    throw new Invalid(
      `Invalid type for request body: expected an object, but got ${typeName(body)} instead.`,
      null,
      'invalid_type',
    );
  for (const key of Object.keys(body)) {
    if (!KNOWN_PARAMETERS.has(key)) throw new Invalid(`Unrecognized request argument supplied: ${key}`, null, null);
  }
  if (body.model === undefined || body.model === '')
    throw new Invalid('you must provide a model parameter', null, null);
  if (typeof body.model !== 'string') throw wrongType('model', 'a string', body.model);
  // Our own wording: the simulator answers whole completions only.
  if (body.stream === true)
    throw new Invalid('This simulator does not stream; send stream: false or leave it out.', 'stream', null);
  const tools = body.tools === undefined ? undefined : checkTools(body.tools);
  if (body.tool_choice !== undefined) {
    if (!tools)
      throw new Invalid(
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        'tool_choice',
        null,
      );
    const ok = ['none', 'auto', 'required'].includes(body.tool_choice as string) || isObject(body.tool_choice);
    if (!ok)
      throw new Invalid(
        `Invalid value: '${String(body.tool_choice)}'. Supported values are: 'none', 'auto', and 'required'.`,
        'tool_choice',
        'invalid_value',
      );
  }
  const messages = checkMessages(body.messages);
  return tools ? { model: body.model, messages, tools } : { model: body.model, messages };
}

function checkTools(value: unknown): ChatToolDeclaration[] {
  if (!Array.isArray(value)) throw wrongType('tools', 'an array of objects', value);
  if (value.length === 0)
    throw new Invalid(
      "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'tools',
      'empty_array',
    );
  return value.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw wrongType(at, 'an object', tool);
    if (tool.type !== 'function')
      throw new Invalid(
        `Invalid value: '${String(tool.type)}'. Supported values are: 'function' and 'custom'.`,
        `${at}.type`,
        'invalid_value',
      );
    const fn = tool.function;
    if (fn === undefined) throw missing(`${at}.function`);
    if (!isObject(fn)) throw wrongType(`${at}.function`, 'an object', fn);
    if (fn.name === undefined) throw missing(`${at}.function.name`);
    if (typeof fn.name !== 'string') throw wrongType(`${at}.function.name`, 'a string', fn.name);
    if (!FUNCTION_NAME.test(fn.name) || fn.name.length > 64) {
      throw new Invalid(
        `Invalid '${at}.function.name': string does not match pattern. ` +
          "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        `${at}.function.name`,
        'invalid_value',
      );
    }
    if (fn.parameters !== undefined && !isObject(fn.parameters))
      throw wrongType(`${at}.function.parameters`, 'an object', fn.parameters);
    return {
      type: 'function',
      function: {
        name: fn.name,
        description: typeof fn.description === 'string' ? fn.description : '',
        parameters: (fn.parameters as Record<string, unknown>) ?? {},
      },
    };
  });
}

function checkMessages(value: unknown): ChatMessage[] {
  if (value === undefined) throw missing('messages');
  if (!Array.isArray(value)) throw wrongType('messages', 'an array of objects', value);
  if (value.length === 0)
    throw new Invalid(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    );
  const out: ChatMessage[] = [];
  let unanswered: string[] = []; // tool_call ids of the last assistant message still without a tool message
  let afterToolCalls = false;
  value.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) throw wrongType(at, 'an object', m);
    if (m.role === undefined) throw missing(`${at}.role`);
    if (!ROLES.includes(m.role as string)) {
      throw new Invalid(
        `Invalid value: '${String(m.role)}'. ` +
          "Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
        `${at}.role`,
        'invalid_value',
      );
    }
    if (m.role !== 'tool' && unanswered.length > 0) throw unansweredCalls(i - 1, unanswered);
    if (m.role === 'tool') {
      if (!afterToolCalls)
        throw new Invalid(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
          null,
        );
      if (m.tool_call_id === undefined) throw missing(`${at}.tool_call_id`);
      if (typeof m.tool_call_id !== 'string') throw wrongType(`${at}.tool_call_id`, 'a string', m.tool_call_id);
      unanswered = unanswered.filter((id) => id !== m.tool_call_id);
      out.push({ role: 'tool', tool_call_id: m.tool_call_id, content: contentText(m.content, at, true) });
      return;
    }
    afterToolCalls = false;
    if (m.role === 'assistant') {
      const calls = m.tool_calls === undefined || m.tool_calls === null ? [] : checkToolCalls(m.tool_calls, at);
      if (calls.length === 0 && (m.content === undefined || m.content === null)) {
        throw new Invalid("Invalid value for 'content': expected a string, got null.", `messages.[${i}].content`, null);
      }
      const content = m.content === undefined || m.content === null ? null : contentText(m.content, at, false);
      out.push(calls.length > 0 ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content });
      unanswered = calls.map((c) => c.id);
      afterToolCalls = calls.length > 0;
      return;
    }
    const content = contentText(m.content, at, true);
    // `developer` is the newer name of `system`; `function` is the deprecated tool message.
    out.push(m.role === 'user' ? { role: 'user', content } : { role: 'system', content });
  });
  if (unanswered.length > 0) throw unansweredCalls(value.length - 1, unanswered);
  return out;
}

function unansweredCalls(index: number, ids: string[]): Invalid {
  return new Invalid(
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
      `The following tool_call_ids did not have response messages: ${ids.join(', ')}`,
    `messages.[${index}].role`,
    null,
  );
}

function checkToolCalls(value: unknown, at: string): ChatToolCall[] {
  if (!Array.isArray(value)) throw wrongType(`${at}.tool_calls`, 'an array of objects', value);
  return value.map((c, j) => {
    const p = `${at}.tool_calls[${j}]`;
    if (!isObject(c)) throw wrongType(p, 'an object', c);
    if (typeof c.id !== 'string')
      throw c.id === undefined ? missing(`${p}.id`) : wrongType(`${p}.id`, 'a string', c.id);
    if (c.type !== 'function')
      throw c.type === undefined
        ? missing(`${p}.type`)
        : new Invalid(
            `Invalid value: '${String(c.type)}'. Supported values are: 'function'.`,
            `${p}.type`,
            'invalid_value',
          );
    if (!isObject(c.function))
      throw c.function === undefined ? missing(`${p}.function`) : wrongType(`${p}.function`, 'an object', c.function);
    const { name, arguments: args } = c.function;
    if (typeof name !== 'string')
      throw name === undefined ? missing(`${p}.function.name`) : wrongType(`${p}.function.name`, 'a string', name);
    if (typeof args !== 'string')
      throw args === undefined
        ? missing(`${p}.function.arguments`)
        : wrongType(`${p}.function.arguments`, 'a string', args);
    return { id: c.id, type: 'function', function: { name, arguments: args } };
  });
}

/** A message's text: a string, or the text parts of a content array joined. */
function contentText(value: unknown, at: string, required: boolean): string {
  if (value === undefined && required) throw missing(`${at}.content`);
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return value
      .map((part, k) => {
        if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string')
          throw wrongType(`${at}.content[${k}]`, 'a text content part', part);
        return part.text;
      })
      .join('\n');
  }
  throw wrongType(`${at}.content`, 'one of a string or array of objects', value);
}
