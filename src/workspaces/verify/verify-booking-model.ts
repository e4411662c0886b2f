import { OpenAIChatClient } from '../../agent/openai/openai-chat-client.ts';
import type { Config } from '../../config/config.ts';
import type { CalcomClient } from '../../scheduling/calcom/calcom-client.ts';
import { modelEndpoint } from '../model-endpoint.ts';
import type { CalcomSettings, LlmSettings } from '../workspace-config.ts';
import { otherFailure, type VerifyLine } from './verify-line.ts';

// `workspace verify` for Cal.com (the key, then the event type) and for the chat model of a
// WhatsApp workspace (the key, then the model name). Read-only requests: nothing is booked and no
// completion is generated (so nothing is billed).

export async function verifyCalcom(
  s: CalcomSettings,
  client: Pick<CalcomClient, 'getEventType'>,
): Promise<VerifyLine[]> {
  const line = (check: string, ok: boolean, note: string): VerifyLine => ({ provider: 'Cal.com', check, ok, note });
  const r = await client.getEventType(s.apiKey, s.eventTypeId);
  if (r.ok) {
    const length = r.value.lengthInMinutes === undefined ? '' : ` (${r.value.lengthInMinutes} min)`;
    return [
      line('API key', true, 'accepted by Cal.com'),
      line('event type', true, `${s.eventTypeId} "${r.value.title}"${length}`),
    ];
  }
  if (r.httpStatus === 401) {
    return [
      line(
        'API key',
        false,
        'Cal.com rejected the API key (401): check scheduling.apiKey (cal_live_…, Settings → Developer → API keys)',
      ),
      line('event type', false, 'not checked (API key rejected)'),
    ];
  }
  if (r.httpStatus === 404 || r.httpStatus === 403) {
    return [
      line('API key', true, 'accepted by Cal.com'),
      line(
        'event type',
        false,
        `${s.eventTypeId} not found for this key (${r.httpStatus}): ` +
          "check scheduling.eventTypeId (the number in the event type's URL in Cal.com)",
      ),
    ];
  }
  return [
    line('API key', false, otherFailure('Cal.com', r, 'scheduling.apiKey and CALCOM_BASE_URL')),
    line('event type', false, 'not checked'),
  ];
}

/** What the server's list offered instead, when the list was read (the retrieve route's text adds nothing). */
function listed(message: string): string {
  return message.startsWith('The server lists') ? `. ${message.slice(0, 300)}` : '';
}

/**
 * The model a WhatsApp workspace's turns use (model-endpoint.ts): its `llm` section over
 * OPENAI_BASE_URL, OPENAI_API_KEY, LLM_MODEL, the installation's key never going to a base URL
 * the workspace chose. What a workspace's own server answered is not repeated: only its status
 * and our own words (the URL could point at anything that answers HTTP).
 */
export async function verifyModel(llm: LlmSettings | undefined, config: Config): Promise<VerifyLine[]> {
  const line = (check: string, ok: boolean, note: string): VerifyLine => ({ provider: 'model', check, ok, note });
  const chosen = modelEndpoint(llm, config);
  if (!chosen.ok) {
    return [line('API key', false, `not checked: ${chosen.problem}`), line('model name', false, 'not checked')];
  }
  const { baseUrl, apiKey, model, keySetting, modelSetting, egress } = chosen.endpoint;
  const timeoutMs = config.LLM_TIMEOUT_MS;
  const client = new OpenAIChatClient({ baseUrl, apiKey, timeoutMs, maxRetries: 0, ...(egress ? { egress } : {}) });
  const r = await client.findModel(model);
  if (r.ok) {
    const via = r.value.via === 'list' ? ' (listed by GET /models)' : '';
    return [line('API key', true, `accepted by ${baseUrl}`), line('model name', true, `${model} exists${via}`)];
  }
  if (r.httpStatus === 401 || r.httpStatus === 403) {
    const what =
      apiKey === ''
        ? `no API key is set and ${baseUrl} requires one (${r.httpStatus}): set ${keySetting}`
        : `${baseUrl} rejected the API key (${r.httpStatus}): check ${keySetting}`;
    return [line('API key', false, what), line('model name', false, 'not checked (API key rejected)')];
  }
  if (r.code === 'model_not_found') {
    const more = egress ? '' : listed(r.message);
    const missing = `${model} does not exist at ${baseUrl} (${r.httpStatus ?? 404}): check ${modelSetting}${more}`;
    return [line('API key', true, `accepted by ${baseUrl}`), line('model name', false, missing)];
  }
  const settings = `${keySetting} and the base URL ${baseUrl}`;
  if (egress) {
    // Not reached (our own message), or an answer that is not the OpenAI models API: its status only.
    const what =
      r.httpStatus === undefined
        ? `${r.message} Nothing more could be checked.`
        : `The model server answered HTTP ${r.httpStatus}, not a model: check ${settings}`;
    return [line('API key', false, what), line('model name', false, 'not checked')];
  }
  return [
    line('API key', false, otherFailure('The model server', r, settings)),
    line('model name', false, 'not checked'),
  ];
}
