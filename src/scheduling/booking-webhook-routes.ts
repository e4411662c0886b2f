import type { FastifyError, FastifyInstance } from 'fastify';
import { errorHandler } from '../http/error-handler.ts';
import { workspaceExists, workspaceFirst } from '../http/webhook-workspace-first.ts';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { CALCOM_SIGNATURE_HEADER } from './calcom/calcom-signature.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { CalcomWebhookOutcome, CalcomWebhookService } from './booking-webhook-service.ts';

// Cal.com payloads carry the whole calendar event (attendees, responses, notes): larger than
// a lead submission, yet nothing legitimate comes near this. The workspace is looked up before
// the body is read (src/http/webhook-workspace-first.ts).
export const CALCOM_WEBHOOK_BODY_LIMIT = 256 * 1024;

/** `POST /api/webhooks/calcom/:slug`, one subscriber URL per workspace (docs/WEBHOOKS.md). */
export function calcomWebhookRoutes(deps: {
  webhooks: CalcomWebhookService;
  workspaces: Pick<WorkspaceService, 'findBySlug'>;
}) {
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRequest', workspaceFirst(workspaceExists(deps.workspaces)));
    // The HMAC covers the exact bytes Cal.com sent, so the body stays a Buffer whatever the
    // Content-Type (JSON, or form-encoded with a custom payload template); it is parsed only
    // after the signature checks out.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CALCOM_WEBHOOK_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    // The shared 413 names the public API's 64 KiB limit; this route has its own.
    scope.setErrorHandler((err: FastifyError, request, reply) =>
      errorHandler(
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? new AppError('webhook_body_too_large') : err,
        request,
        reply,
      ),
    );

    scope.post<{ Params: { slug: string } }>('/api/webhooks/calcom/:slug', async (request) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers[CALCOM_SIGNATURE_HEADER];
      // request.log is a child of the app's pino logger, so the service's lines carry the request id.
      const outcome = await deps.webhooks.receive(
        request.params.slug,
        raw,
        typeof header === 'string' ? header : undefined,
        request.log as Logger,
      );
      return answer(outcome);
    });
  };
}

// Cal.com only looks at the status; the body helps whoever reads its webhook logs.
function answer(outcome: CalcomWebhookOutcome): Record<string, unknown> {
  switch (outcome.kind) {
    case 'applied':
      return { ok: true };
    case 'duplicate':
      return { ok: true, duplicate: true };
    case 'ignored':
      return { ok: true, ignored: outcome.reason };
  }
}
