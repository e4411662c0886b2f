import type { FastifyError, FastifyInstance } from 'fastify';
import { errorHandler } from '../http/error-handler.ts';
import { workspaceExists, workspaceFirst } from '../http/webhook-workspace-first.ts';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { VapiEndpoint, VapiServerService } from './voice-server-service.ts';

// Every Vapi server message may carry the call's artifact (the conversation so far), and an
// end-of-call-report carries the whole conversation several times over (messages, the OpenAI
// format, the transcript, the call object): a long call reaches a few MiB. Vapi publishes no
// bound and does not send a refused report again, so the limit keeps room for the longest calls.
// What it costs is held only for a workspace that exists: the slug is looked up before the body
// is read (src/http/webhook-workspace-first.ts).
export const VAPI_BODY_LIMIT = 8 * 1024 * 1024;

/** `POST /api/vapi/:slug/events` and `/tools`: the server URLs Vapi calls (docs/VOICE.md). */
export function vapiRoutes(deps: { service: VapiServerService; workspaces: Pick<WorkspaceService, 'findBySlug'> }) {
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRequest', workspaceFirst(workspaceExists(deps.workspaces)));
    // The HMAC plan signs the exact bytes, so the body stays a Buffer until it is verified.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: VAPI_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((err: FastifyError, request, reply) =>
      errorHandler(
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? new AppError('webhook_body_too_large', { message: 'The request body must be at most 8 MiB.' })
          : err,
        request,
        reply,
      ),
    );
    // Tools still running past their deadline finish before the database goes away.
    scope.addHook('onClose', async () => deps.service.idle());

    for (const endpoint of ['events', 'tools'] as const satisfies readonly VapiEndpoint[]) {
      scope.post<{ Params: { slug: string } }>(`/api/vapi/:slug/${endpoint}`, async (request) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        return deps.service.receive(request.params.slug, endpoint, raw, request.headers, request.log as Logger);
      });
    }
  };
}
