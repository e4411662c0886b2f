import type { FastifyError, FastifyInstance } from 'fastify';
import { errorHandler } from '../../http/error-handler.ts';
import { webhookBodyTooLarge } from '../../http/webhook-workspace-first.ts';
import type { Logger } from '../../shared/logger.ts';
import { META_SIGNATURE_HEADER } from '../../whatsapp/meta/meta-signature.ts';
import type { MetaIntakeService } from './meta-intake-service.ts';

// Meta Lead Ads' webhook, one URL per connected Page (docs/INTAKE.md, "Meta Lead Ads"):
//   GET  /api/intake/meta/:token   the App Dashboard's subscription handshake
//   POST /api/intake/meta/:token   `leadgen` changes, signed with the app secret
// The body stays raw bytes: the signature is over exactly what Meta sent.

/** A `leadgen` POST names ids only; Meta batches at most a few changes. 256 KiB leaves room. */
export const META_LEADGEN_BODY_LIMIT = 256 * 1024;

type Params = { Params: { token: string } };

export function metaIntakeRoutes(deps: { meta: MetaIntakeService }) {
  return async (scope: FastifyInstance): Promise<void> => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: META_LEADGEN_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      const tooLarge = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE';
      errorHandler(tooLarge ? webhookBodyTooLarge(META_LEADGEN_BODY_LIMIT) : err, request, reply);
    });

    scope.get<Params & { Querystring: Record<string, unknown> }>('/api/intake/meta/:token', async (request, reply) => {
      const answer = await deps.meta.verification(request.params.token, request.query);
      return reply.status(answer.status).type('text/plain').send(answer.body);
    });

    scope.post<Params>('/api/intake/meta/:token', async (request) => {
      const signature = request.headers[META_SIGNATURE_HEADER];
      await deps.meta.webhook(
        request.params.token,
        Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        typeof signature === 'string' ? signature : undefined,
        request.log as Logger,
      );
      return { ok: true };
    });
  };
}
