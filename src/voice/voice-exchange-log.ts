import type { Queryable } from '../db/pool.ts';
import { recordIntegrationEventSafely } from '../integration-log/integration-log.ts';
import type { Logger } from '../shared/logger.ts';
import { vapiCallBody } from './vapi/vapi-client.ts';
import type { PlaceCallRequest, PlaceCallResult, ProviderExchange, VoiceProvider } from './voice-provider.ts';

// Wraps the voice provider so every call placed is written to the integration log: the request
// body as sent (our server secret masked) and Vapi's answer. Awaited, so the entry exists when the
// submission is answered, but a failure to write it never fails the submission.

export function withVoiceExchangeLog(inner: VoiceProvider, db: Queryable, log: Logger): VoiceProvider {
  return {
    async placeCall(req: PlaceCallRequest): Promise<PlaceCallResult> {
      const started = Date.now();
      let result: PlaceCallResult;
      let exchange: ProviderExchange;
      if (inner.placeCallTraced) {
        ({ result, exchange } = await inner.placeCallTraced(req));
      } else {
        // A provider without tracing (a test double): log what we know.
        result = await inner.placeCall(req);
        exchange = {
          method: 'POST',
          path: '/call',
          requestBody: vapiCallBody(req),
          ms: Date.now() - started,
          ...(result.ok
            ? {}
            : { ...(result.httpStatus ? { httpStatus: result.httpStatus } : {}), responseText: result.message }),
        };
      }
      await recordVoiceExchange(db, log, {
        workspaceId: req.metadata.workspaceId,
        leadId: req.metadata.leadId,
        exchange,
        outcome: result.ok ? 'accepted' : 'rejected',
        secrets: [req.apiKey],
      });
      return result;
    },
  };
}

/** One exchange with Vapi as an integration-log entry (also used by `workspace verify`). */
export function recordVoiceExchange(
  db: Queryable,
  log: Logger,
  e: { workspaceId: string; leadId?: string | null; exchange: ProviderExchange; outcome: string; secrets: string[] },
): Promise<void> {
  const x = e.exchange;
  // `GET /assistant/{id}`: one kind per endpoint, the id is in the payload.
  const path = x.path.split('/').length > 2 ? x.path.replace(/\/[^/]+$/, '/{id}') : x.path;
  return recordIntegrationEventSafely(db, log, {
    provider: 'vapi',
    workspaceId: e.workspaceId,
    leadId: e.leadId ?? null,
    direction: 'out',
    kind: `${x.method} ${path}`,
    httpStatus: x.httpStatus ?? null,
    outcome: e.outcome,
    latencyMs: x.ms,
    error: exchangeError(x),
    payload: {
      request: { method: x.method, path: x.path, ...(x.requestBody === undefined ? {} : { body: x.requestBody }) },
      response:
        x.error !== undefined ? { error: x.error } : { status: x.httpStatus, body: parseOrText(x.responseText) },
      ms: x.ms,
    },
    secrets: e.secrets,
  });
}

/** The failure in a line: the network error, or the HTTP status with the start of Vapi's answer. */
function exchangeError(x: ProviderExchange): string | null {
  if (x.error !== undefined) return x.error;
  if (x.httpStatus === undefined || x.httpStatus < 400) return null;
  return `HTTP ${x.httpStatus}${x.responseText ? `: ${x.responseText.slice(0, 300)}` : ''}`;
}

function parseOrText(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
