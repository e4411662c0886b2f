import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorHandler } from '../http/error-handler.ts';
import { webhookBodyTooLarge } from '../http/webhook-workspace-first.ts';
import { AppError } from '../shared/errors.ts';
import { googleDelivery, isGooglePayload, parseGoogleBody } from './google-lead.ts';
import { applyMapping, FLAT_DEFAULTS } from './field-mapping.ts';
import type { IntakeOutcome, IntakeService } from './intake-service.ts';
import { sourceConfigOf } from './lead-source-config.ts';
import type { LeadSourceKind, LeadSourceRow } from './lead-source-queries.ts';
import type { LeadSourceService } from './lead-source-service.ts';
import { checkWebhookAuth, parseWebhookBody, sameText, SIGNATURE_HEADER } from './webhook-auth.ts';

// The connected sources' URLs (docs/INTAKE.md):
//   POST /api/intake/webhook/:token   a generic webhook (Zapier, n8n, Typeform, Tally, a form plugin…)
//   POST /api/intake/google/:token    a Google Ads lead form's webhook
// The source is looked up by its token before a byte of the body is read (as the providers'
// webhooks look up their workspace first): an unknown or revoked token is a 404 at once. Bodies
// stay raw bytes until the secret is checked, then the payload is mapped and submitted through
// IntakeService. A lead, a lead sent before and a phone the workspace already has are all 200, so
// a source never retries what is already done; an error the sender can fix is a 4xx, one it
// should retry (rate limit, voice provider down) a 429 or 5xx.

/** A form tool's submission is a few kilobytes; 64 KiB leaves room for long answers. */
export const INTAKE_BODY_LIMIT = 64 * 1024;

type Params = { Params: { token: string } };

export function intakeRoutes(deps: { sources: LeadSourceService; intake: IntakeService }) {
  const found = new WeakMap<FastifyRequest, LeadSourceRow>();
  const sourceFirst = (kind: LeadSourceKind) => async (request: FastifyRequest) => {
    const token = (request.params as { token?: unknown }).token;
    const source = typeof token === 'string' ? await deps.sources.findByToken(token) : null;
    if (!source || source.kind !== kind) throw new AppError('route_not_found');
    found.set(request, source);
  };

  return async (scope: FastifyInstance): Promise<void> => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: INTAKE_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      const tooLarge = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE';
      errorHandler(tooLarge ? webhookBodyTooLarge(INTAKE_BODY_LIMIT) : err, request, reply);
    });

    scope.post<Params>('/api/intake/webhook/:token', { onRequest: sourceFirst('webhook') }, async (request, reply) => {
      const source = found.get(request)!;
      const raw = rawBody(request.body);
      const secret = deps.sources.secretOf(source) ?? '';
      const auth = checkWebhookAuth(secret, raw, {
        signature: header(request.headers[SIGNATURE_HEADER]),
        authorization: header(request.headers.authorization),
      });
      if (!auth.ok) {
        await deps.intake.rejected(source, 401, auth.reason, { bytes: raw.length });
        throw new AppError('webhook_signature_invalid');
      }
      const payload = parseWebhookBody(raw, header(request.headers['content-type']));
      if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
        await deps.intake.rejected(source, 400, 'The body is not a JSON object (or a form post).', {
          text: raw.toString('utf8').slice(0, 2000),
        });
        throw new AppError('invalid_json');
      }
      const lead = applyMapping(payload, sourceConfigOf(source.config).mapping, FLAT_DEFAULTS);
      const outcome = await deps.intake.submit(source, { lead, detail: {}, payload, secret });
      return answer(reply, outcome);
    });

    scope.post<Params>('/api/intake/google/:token', { onRequest: sourceFirst('google') }, async (request, reply) => {
      const source = found.get(request)!;
      const raw = rawBody(request.body);
      let payload: unknown;
      try {
        payload = parseGoogleBody(raw.toString('utf8'));
      } catch {
        payload = null;
      }
      if (!isGooglePayload(payload)) {
        // Only the size: a body that does not parse has no key to check, so it is an
        // unauthenticated request (anyone with the URL), and its text may hold the key itself.
        await deps.intake.rejected(source, 400, 'The body is not a JSON object.', { bytes: raw.length });
        throw new AppError('invalid_json');
      }
      // Google sends its key in the body, not in a header: checked before anything else of it is used.
      const secret = deps.sources.secretOf(source) ?? '';
      if (typeof payload.google_key !== 'string' || !sameText(payload.google_key, secret)) {
        // Unauthenticated: only a bounded id of it is kept, so a caller cannot fill the log.
        await deps.intake.rejected(source, 401, 'google_key does not match the key of this source.', {
          lead_id: typeof payload.lead_id === 'string' ? payload.lead_id.slice(0, 200) : null,
          bytes: raw.length,
        });
        throw new AppError('webhook_signature_invalid');
      }
      const delivery = googleDelivery(payload, sourceConfigOf(source.config).mapping);
      const outcome = await deps.intake.submit(source, { ...delivery, secret });
      return answer(reply, outcome);
    });
  };
}

function answer(reply: FastifyReply, o: IntakeOutcome) {
  void reply.status(200);
  return { ok: true, leadId: o.leadId, outcome: o.outcome, livemode: o.livemode };
}

function rawBody(body: unknown): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.alloc(0);
}

function header(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
