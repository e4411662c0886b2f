import type { FastifyError, FastifyInstance } from 'fastify';
import { errorHandler } from '../http/error-handler.ts';
import { webhookBodyTooLarge, workspaceExists, workspaceFirst } from '../http/webhook-workspace-first.ts';
import { TWILIO_STATUS_KEY_PARAM } from './twilio/twilio-client.ts';
import { META_SIGNATURE_HEADER } from './meta/meta-signature.ts';
import { TWILIO_SIGNATURE_HEADER } from './twilio/twilio-signature.ts';
import type { Logger } from '../shared/logger.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { WhatsappWebhookService } from './whatsapp-webhook-service.ts';

// The WhatsApp providers' webhooks, one URL set per workspace (docs/WHATSAPP.md):
//   POST /api/whatsapp/twilio/:slug/inbound   incoming messages (answered with empty TwiML)
//   POST /api/whatsapp/twilio/:slug/status    delivery statuses (our StatusCallback)
//   GET  /api/whatsapp/meta/:slug/webhook     Meta's subscription handshake
//   POST /api/whatsapp/meta/:slug/webhook     Meta's messages and statuses
// Bodies stay raw bytes: both signatures are computed over exactly what the provider sent. The
// workspace is looked up before the body is read (src/http/webhook-workspace-first.ts).

// Twilio posts one form per message or status: a WhatsApp message is at most 1,600 characters
// (under 20 KB percent-encoded, even in 4-byte characters) beside a few dozen short fields and up
// to ten media URLs; a status is smaller. 64 KiB leaves room to spare.
export const TWILIO_BODY_LIMIT = 64 * 1024;
// Meta batches updates into one POST and documents its webhook payloads as up to 3 MB; refusing
// a batch would make Meta send it again and again, and then drop every update in it.
export const META_BODY_LIMIT = 3 * 1024 * 1024;
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

type Params = { Params: { slug: string } };

export function whatsappWebhookRoutes(deps: {
  webhooks: WhatsappWebhookService;
  workspaces: Pick<WorkspaceService, 'findBySlug'>;
}) {
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRequest', workspaceFirst(workspaceExists(deps.workspaces)));
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: META_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      const tooLarge = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE';
      errorHandler(tooLarge ? webhookBodyTooLarge(request.routeOptions.bodyLimit) : err, request, reply);
    });

    scope.post<Params>(
      '/api/whatsapp/twilio/:slug/inbound',
      { bodyLimit: TWILIO_BODY_LIMIT },
      async (request, reply) => {
        await deps.webhooks.twilioInbound(
          request.params.slug,
          raw(request.body),
          request.url,
          header(request.headers[TWILIO_SIGNATURE_HEADER]),
          request.log as Logger,
        );
        return reply.type('text/xml').send(EMPTY_TWIML);
      },
    );

    scope.post<Params & { Querystring: Record<string, unknown> }>(
      '/api/whatsapp/twilio/:slug/status',
      { bodyLimit: TWILIO_BODY_LIMIT },
      async (request, reply) => {
        const key = request.query[TWILIO_STATUS_KEY_PARAM];
        await deps.webhooks.twilioStatus(
          request.params.slug,
          raw(request.body),
          request.url,
          header(request.headers[TWILIO_SIGNATURE_HEADER]),
          typeof key === 'string' && key.length <= 100 ? key : null,
          request.log as Logger,
        );
        return reply.status(204).send();
      },
    );

    scope.get<Params & { Querystring: Record<string, unknown> }>(
      '/api/whatsapp/meta/:slug/webhook',
      async (request, reply) => {
        const answer = await deps.webhooks.metaVerification(request.params.slug, request.query);
        return reply.status(answer.status).type('text/plain').send(answer.body);
      },
    );

    scope.post<Params>('/api/whatsapp/meta/:slug/webhook', { bodyLimit: META_BODY_LIMIT }, async (request) => {
      await deps.webhooks.metaEvents(
        request.params.slug,
        raw(request.body),
        header(request.headers[META_SIGNATURE_HEADER]),
        request.log as Logger,
      );
      return { ok: true };
    });
  };
}

function raw(body: unknown): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.alloc(0);
}

function header(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
